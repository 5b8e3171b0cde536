package pipelined

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// The server's own answers, as nats-server 2.15 writes them (stream.go's
// pubAck template), and what else a stream can say.
var ackCases = []struct {
	name string
	data string
	want *jetstream.PubAck
	err  error // errors.Is, or an *APIError's code
	code jetstream.ErrorCode
	fast bool // read by scanAck, not encoding/json
}{
	{name: "plain", data: `{"stream":"SCHED_FIRES","seq":42}`, want: &jetstream.PubAck{Stream: "SCHED_FIRES", Sequence: 42}, fast: true},
	{name: "domain", data: `{"stream":"KV_s","domain":"hub","seq":7}`, want: &jetstream.PubAck{Stream: "KV_s", Domain: "hub", Sequence: 7}, fast: true},
	{name: "duplicate", data: `{"stream":"SCHED_FIRES","seq":9,"duplicate": true}`, want: &jetstream.PubAck{Stream: "SCHED_FIRES", Sequence: 9, Duplicate: true}, fast: true},
	{name: "spaced", data: " {\n\"stream\" : \"S\" ,\t\"seq\":18446744073709551615 } ", want: &jetstream.PubAck{Stream: "S", Sequence: 18446744073709551615}, fast: true},
	{name: "wrong last sequence", data: `{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"},"stream":"KV_s","seq":0}`, code: 10071},
	{name: "too large", data: `{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum allowed"}}`, code: 10054},
	{name: "batch", data: `{"stream":"S","seq":3,"batch":"b","count":3}`, want: &jetstream.PubAck{Stream: "S", Sequence: 3}}, // fields nats.go does not read
	{name: "counter", data: `{"stream":"S","seq":3,"val":"12"}`, want: &jetstream.PubAck{Stream: "S", Sequence: 3, Value: "12"}},
	{name: "escaped stream", data: `{"stream":"S\u0041","seq":3}`, want: &jetstream.PubAck{Stream: "SA", Sequence: 3}},
	{name: "capitalised key", data: `{"Stream":"S","seq":3}`, want: &jetstream.PubAck{Stream: "S", Sequence: 3}},
	{name: "key twice", data: `{"stream":"S","seq":3,"seq":4}`, want: &jetstream.PubAck{Stream: "S", Sequence: 4}},
	{name: "seq past uint64", data: `{"stream":"S","seq":18446744073709551616}`, err: jetstream.ErrInvalidJSAck},
	{name: "no stream", data: `{"seq":3}`, err: jetstream.ErrInvalidJSAck},
	{name: "empty stream", data: `{"stream":"","seq":3}`, err: jetstream.ErrInvalidJSAck},
	{name: "not json", data: `nope`, err: jetstream.ErrInvalidJSAck},
	{name: "empty", data: ``, err: jetstream.ErrInvalidJSAck},
	{name: "trailing", data: `{"stream":"S","seq":3}x`, err: jetstream.ErrInvalidJSAck},
	{name: "negative seq", data: `{"stream":"S","seq":-3}`, err: jetstream.ErrInvalidJSAck},
}

func TestParseAck(t *testing.T) {
	for _, c := range ackCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAck([]byte(c.data), "SCHED_FIRES")
			switch {
			case c.code != 0:
				var api *jetstream.APIError
				if !errors.As(err, &api) || api.ErrorCode != c.code {
					t.Fatalf("error %v, want the stream's error %d", err, c.code)
				}
			case c.err != nil:
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
			case err != nil:
				t.Fatalf("error %v, want %+v", err, c.want)
			case *got != *c.want:
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if _, fast := scanAck([]byte(c.data), ""); fast != c.fast {
				t.Fatalf("read by hand: %v, want %v", fast, c.fast)
			}
		})
	}
}

// The stream's name is not allocated again for each acknowledgement of
// the same stream.
func TestParseAckReusesTheStreamName(t *testing.T) {
	data := []byte(`{"stream":"SCHED_FIRES","seq":42}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := parseAck(data, "SCHED_FIRES"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the PubAck itself
		t.Fatalf("%v allocations per acknowledgement, want 1", allocs)
	}
}

// FuzzParseAck: whatever scanAck reads, encoding/json reads the same; so
// the hand-read path never gives an answer the general one would not.
func FuzzParseAck(f *testing.F) {
	for _, c := range ackCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := scanAck(data, "SCHED_FIRES")
		if !ok {
			return
		}
		slow, err := decodeAck(data)
		if err != nil {
			t.Fatalf("read by hand as %+v, encoding/json refuses it: %v", fast, err)
		}
		if *fast != *slow {
			t.Fatalf("read by hand as %+v, by encoding/json as %+v", fast, slow)
		}
	})
}

func BenchmarkParseAck(b *testing.B) {
	data := []byte(`{"stream":"SCHED_FIRES","seq":123456789,"duplicate": true}`)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseAck(data, "SCHED_FIRES"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeAck(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
