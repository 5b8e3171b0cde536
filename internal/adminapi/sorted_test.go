package adminapi

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/readmodel"
)

// TestSortedIndexMatchesAMap drives a sortedIndex and a map with the same
// random puts and removes (enough to split and empty many blocks) and
// checks that walks from random cursors and prefixes agree.
func TestSortedIndexMatchesAMap(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	var x sortedIndex
	ref := map[string]readmodel.Flags{}
	key := func() string { return fmt.Sprintf("k%d", rng.IntN(5000)) }
	for step := range 40_000 {
		k := key()
		if rng.IntN(3) == 0 {
			_, had := ref[k]
			if x.remove(k) != had {
				t.Fatalf("seed %d step %d: remove(%s) disagrees", seed, step, k)
			}
			delete(ref, k)
		} else {
			f := readmodel.Flags(rng.IntN(16))
			x.put(row{key: k, Row: readmodel.Row{Flags: f}})
			ref[k] = f
		}
		if step%4000 != 0 {
			continue
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range ref {
				if !yield(k) {
					return
				}
			}
		})
		if x.Len() != len(keys) {
			t.Fatalf("seed %d step %d: Len %d, want %d", seed, step, x.Len(), len(keys))
		}
		for range 20 {
			prefix := []string{"", "k1", "k23", "k4999", "z"}[rng.IntN(5)]
			after := []string{"", key(), "k", "zz"}[rng.IntN(4)]
			var got, want []string
			x.ascend(prefix, after, func(r *row) bool {
				if ref[r.key] != r.Flags {
					t.Fatalf("seed %d: %s has flags %d, want %d", seed, r.key, r.Flags, ref[r.key])
				}
				got = append(got, r.key)
				return true
			})
			for _, k := range keys {
				if strings.HasPrefix(k, prefix) && k > after {
					want = append(want, k)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: ascend(%q, %q) = %d keys, want %d", seed, step, prefix, after, len(got), len(want))
			}
		}
	}
	for _, blk := range x.blocks {
		if len(blk) == 0 || len(blk) > blockMax {
			t.Fatalf("seed %d: a block of %d rows", seed, len(blk))
		}
	}
}

// TestSortedIndexStaysCompact: no block grows past blockMax rows of
// capacity, in any order of puts, and rows put in key order (a catalogue's
// load) fill their blocks: the index holds one row per schedule, so a
// half-empty block is megabytes at a million.
func TestSortedIndexStaysCompact(t *testing.T) {
	const n = 20 * blockMax
	capacity := func(x *sortedIndex) (total int) {
		for _, b := range x.blocks {
			if cap(b) > blockMax {
				t.Fatalf("a block of %d rows has capacity %d, more than blockMax %d", len(b), cap(b), blockMax)
			}
			total += cap(b)
		}
		return total
	}
	var ordered sortedIndex
	for i := range n {
		ordered.put(row{key: fmt.Sprintf("k%07d", i)})
	}
	if c := capacity(&ordered); ordered.Len() != n || c > n+blockMax {
		t.Fatalf("%d rows in key order take capacity for %d, want at most %d", ordered.Len(), c, n+blockMax)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var random sortedIndex
	for range n {
		random.put(row{key: fmt.Sprintf("k%07d", rng.IntN(4*n))})
	}
	capacity(&random)
	for i := n - 1; i >= 0; i-- { // and in reverse order
		random.put(row{key: fmt.Sprintf("j%07d", i)})
	}
	capacity(&random)
}
