package audit_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/audit"
)

// digestOf digests the messages at seqs (of the range first..last), the
// body of seq altered when it is in alter.
func digestOf(first, last uint64, seqs []uint64, alter uint64) audit.Digest {
	h := audit.NewRangeHasher(first, 4)
	at := time.Unix(0, 0)
	for _, s := range seqs {
		body := fmt.Appendf(nil, `{"n":%d}`, s)
		if s == alter {
			body = []byte(`{"n":-1}`)
		}
		h.Add(s, "sched.fire.wf", fmt.Sprintf("slot-%d", s), body, at.Add(time.Duration(s)*time.Second))
	}
	var d audit.Digest
	h.Finish(last, &d)
	return d
}

// TestRangeHasher: the digest of a range is reproducible, a missing or
// altered message changes its block's hash and no other, and gaps are
// recorded as ranges.
func TestRangeHasher(t *testing.T) {
	all := []uint64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	d := digestOf(3, 12, all, 0)
	if d.First != 3 || d.Last != 12 || d.Count != 10 || d.BlockSize != 4 || len(d.Blocks) != 3*8 || d.Gaps != nil {
		t.Fatalf("digest %+v", d)
	}
	if again := digestOf(3, 12, all, 0); again.SHA256 != d.SHA256 || !bytes.Equal(again.Blocks, d.Blocks) {
		t.Fatal("the same messages digest differently")
	}
	for _, c := range []struct {
		name      string
		seqs      []uint64
		alter     uint64
		block     int // the block that differs
		wantGaps  [][2]uint64
		wantCount int
	}{
		{"message 5 gone", slices.DeleteFunc(slices.Clone(all), func(s uint64) bool { return s == 5 }), 0, 0, [][2]uint64{{5, 5}}, 9},
		{"message 9 altered", all, 9, 1, nil, 10},
		{"messages 11 and 12 gone (the tail)", all[:8], 0, 2, [][2]uint64{{11, 12}}, 8},
	} {
		got := digestOf(3, 12, c.seqs, c.alter)
		if got.SHA256 == d.SHA256 || got.Count != c.wantCount || !slices.Equal(got.Gaps, c.wantGaps) {
			t.Errorf("%s: %+v", c.name, got)
		}
		for i := range 3 {
			same := bytes.Equal(got.Blocks[i*8:(i+1)*8], d.Blocks[i*8:(i+1)*8])
			if same == (i == c.block) {
				t.Errorf("%s: block %d same=%v", c.name, i, same)
			}
		}
	}
}
