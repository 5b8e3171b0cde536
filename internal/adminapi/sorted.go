package adminapi

import (
	"slices"
	"sort"
	"strings"

	"github.com/jetsched/jetsched/internal/readmodel"
)

// row is one record in a sortedIndex: its key and what listings filter
// on, kept small because the index holds one per schedule (or timer).
type row struct {
	key           string
	readmodel.Row        // a schedule's flags, time and ended list (readmodel.Follower)
	group         uint32 // the interned workflow (interner)
	labels        uint32 // the numbered label set (labels.Sets)
}

// blockMax is the most rows one block of a sortedIndex holds; a fuller
// block is split in two. Inserting moves at most blockMax rows.
const blockMax = 512

// sortedIndex keeps rows in key order as a list of sorted blocks: finding
// a key is two binary searches, inserting or removing one moves at most a
// block's rows, and walking from any key is a sequential read. It is what
// lets a listing start its page at a cursor among a million keys without
// reading or sorting the others. Not safe for concurrent use.
type sortedIndex struct {
	blocks [][]row
	n      int
}

// Len is the number of rows.
func (x *sortedIndex) Len() int { return x.n }

// seek returns the position of the first row whose key is >= key
// (b == len(x.blocks) when there is none).
func (x *sortedIndex) seek(key string) (b, i int) {
	b = sort.Search(len(x.blocks), func(j int) bool {
		blk := x.blocks[j]
		return blk[len(blk)-1].key >= key
	})
	if b == len(x.blocks) {
		return b, 0
	}
	blk := x.blocks[b]
	i = sort.Search(len(blk), func(j int) bool { return blk[j].key >= key })
	return b, i
}

// get returns the row of key.
func (x *sortedIndex) get(key string) (*row, bool) {
	b, i := x.seek(key)
	if b == len(x.blocks) || x.blocks[b][i].key != key {
		return nil, false
	}
	return &x.blocks[b][i], true
}

// put inserts r, or replaces the row with its key.
func (x *sortedIndex) put(r row) {
	b, i := x.seek(r.key)
	if b < len(x.blocks) && x.blocks[b][i].key == r.key {
		x.blocks[b][i] = r
		return
	}
	x.n++
	if b == len(x.blocks) { // after every key: append to the last block
		if b == 0 {
			x.blocks = append(x.blocks, make([]row, 0, blockMax))
		} else {
			b--
		}
		i = len(x.blocks[b])
	}
	// A full block is split before the insert, so that no block grows
	// past blockMax's capacity. Rows coming in key order (a load) start a
	// new block and leave the full one full: every block but the last
	// stays full, not half empty.
	if blk := x.blocks[b]; len(blk) >= blockMax {
		if b == len(x.blocks)-1 && i == len(blk) {
			x.blocks = append(x.blocks, make([]row, 0, blockMax))
			b, i = b+1, 0
		} else {
			half := len(blk) / 2
			right := make([]row, len(blk)-half, blockMax)
			copy(right, blk[half:])
			clear(blk[half:]) // drop the moved rows' key references
			x.blocks[b] = blk[:half]
			x.blocks = slices.Insert(x.blocks, b+1, right)
			if i > half {
				b, i = b+1, i-half
			}
		}
	}
	blk := append(x.blocks[b], row{})
	copy(blk[i+1:], blk[i:])
	blk[i] = r
	x.blocks[b] = blk
}

// remove deletes the row of key, if any.
func (x *sortedIndex) remove(key string) bool {
	b, i := x.seek(key)
	if b == len(x.blocks) || x.blocks[b][i].key != key {
		return false
	}
	x.n--
	blk := x.blocks[b]
	copy(blk[i:], blk[i+1:])
	blk[len(blk)-1] = row{}
	blk = blk[:len(blk)-1]
	if len(blk) > 0 {
		x.blocks[b] = blk
		return true
	}
	copy(x.blocks[b:], x.blocks[b+1:])
	x.blocks[len(x.blocks)-1] = nil
	x.blocks = x.blocks[:len(x.blocks)-1]
	return true
}

// ascend calls fn with each row in key order, starting at the first key
// after `after` that begins with prefix, while the keys begin with prefix
// and fn returns true.
func (x *sortedIndex) ascend(prefix, after string, fn func(*row) bool) {
	from := max(prefix, after)
	b, i := x.seek(from)
	for ; b < len(x.blocks); b, i = b+1, 0 {
		blk := x.blocks[b]
		for ; i < len(blk); i++ {
			r := &blk[i]
			if r.key == after {
				continue
			}
			if !strings.HasPrefix(r.key, prefix) || !fn(r) {
				return
			}
		}
	}
}

// interner gives each workflow name a small number, so that rows keep a
// uint32 instead of a string.
type interner struct {
	ids   map[string]uint32
	names []string
}

// id returns the number of name, adding it when new. 0 is "".
func (in *interner) id(name string) uint32 {
	if name == "" {
		return 0
	}
	if id, ok := in.ids[name]; ok {
		return id
	}
	if in.ids == nil {
		in.ids, in.names = map[string]uint32{}, []string{""}
	}
	id := uint32(len(in.names))
	in.ids[name] = id
	in.names = append(in.names, name)
	return id
}

// lookup returns the number of a known name.
func (in *interner) lookup(name string) (uint32, bool) {
	id, ok := in.ids[name]
	return id, ok
}
