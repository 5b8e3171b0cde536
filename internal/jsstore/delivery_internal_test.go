package jsstore

import (
	"fmt"
	"strings"
	"testing"
)

func TestDeliveryOf(t *testing.T) {
	tests := []struct {
		reply string
		want  delivery
		ok    bool
	}{
		{"$JS.ACK.KV_sched_state.c_1.1.42.7.1733400000000000000.5", delivery{42, 1733400000000000000, 5}, true},
		{"$JS.ACK._.ACCHASH.KV_sched_state.c_1.1.42.7.1733400000000000000.0.tok", delivery{42, 1733400000000000000, 0}, true},
		{"$JS.ACK.hub.ACCHASH.KV_sched_state.c_1.1.42.7.1733400000000000000.9", delivery{42, 1733400000000000000, 9}, true},
		{"$JS.ACK.hub.ACCHASH.S.C.1.42.7.17.9.tok.more.tokens", delivery{42, 17, 9}, true},
		{"$JS.ACK.S.C.1.42.7.17", delivery{}, false},                      // 8 tokens
		{"$JS.ACK.a.b.S.C.1.42.7.17", delivery{}, false},                  // 10 tokens
		{"$JS.NAK.S.C.1.42.7.17.9", delivery{}, false},                    // not an ack subject
		{"_INBOX.abc.S.C.1.42.7.17.9", delivery{}, false},                 // not an ack subject
		{"$JS.ACK.S.C.1.x42.7.17.9", delivery{}, false},                   // not a number
		{"$JS.ACK.S.C.1.42.7.17.-9", delivery{}, false},                   // negative pending
		{"$JS.ACK.S.C.1.42.7.17.99999999999999999999", delivery{}, false}, // past uint64
		{"", delivery{}, false},
	}
	for _, tc := range tests {
		got, ok := deliveryOf(tc.reply)
		if ok != tc.ok || got != tc.want {
			t.Errorf("deliveryOf(%q) = %+v, %v; want %+v, %v", tc.reply, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzDeliveryOf: any subject is read without a panic, and the fields of
// a reply in either form come back as they were written.
func FuzzDeliveryOf(f *testing.F) {
	f.Add(uint64(1), int64(1733400000000000000), uint64(0), "S", "hub", "$JS.ACK.S.C.1.1.1.1.0")
	f.Add(uint64(1<<63), int64(0), uint64(12345), "KV_x", "_", "$JS.ACK")
	f.Fuzz(func(t *testing.T, seq uint64, at int64, pending uint64, stream, domain, any string) {
		deliveryOf(any) // no panic
		if at < 0 || !token(stream) || !token(domain) {
			return
		}
		want := delivery{seq: seq, at: at, pending: pending}
		for _, reply := range []string{
			fmt.Sprintf("$JS.ACK.%s.cons.3.%d.8.%d.%d", stream, seq, at, pending),
			fmt.Sprintf("$JS.ACK.%s.HASH.%s.cons.3.%d.8.%d.%d.rand", domain, stream, seq, at, pending),
		} {
			if got, ok := deliveryOf(reply); !ok || got != want {
				t.Fatalf("deliveryOf(%q) = %+v, %v; want %+v", reply, got, ok, want)
			}
		}
	})
}

// token reports whether s can be one token of a subject.
func token(s string) bool { return s != "" && !strings.ContainsAny(s, ". \t\r\n") }
