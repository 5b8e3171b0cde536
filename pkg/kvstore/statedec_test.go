package kvstore_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// sameAsJSON fails t unless data, which the fast decoder read as got,
// decodes with encoding/json to the same record (compared as encoded).
func sameAsJSON(t *testing.T, data []byte, got kvstore.State) {
	t.Helper()
	var p plainState
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("the fast decoder read %q, which encoding/json refuses: %v", data, err)
	}
	want, err := kvstore.State(p).Encode()
	if err != nil {
		t.Fatalf("encode encoding/json's reading of %q: %v", data, err)
	}
	have, err := got.Encode()
	if err != nil {
		t.Fatalf("encode the fast reading of %q: %v", data, err)
	}
	if !bytes.Equal(want, have) {
		t.Fatalf("%q:\nfast read %s\njson read %s", data, have, want)
	}
}

// TestStateDecodeFastProperty: random records as AppendJSON writes them
// are read by the fast decoder when they are in its form (no pause,
// trigger, backfill, running fire or trace, no escaped string), to what
// encoding/json reads, and DecodeState gives the same for all of them.
func TestStateDecodeFastProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 34))
	fast := 0
	for i := range 5000 {
		var s kvstore.State
		fill(t, r, reflect.ValueOf(&s).Elem(), "State")
		if i%2 == 0 { // half in the common form
			s.Paused, s.Triggers, s.Backfill, s.Running = nil, nil, nil, nil
			if s.Claim != nil {
				s.Claim.Trace = nil
			}
		}
		data, err := s.Encode()
		if err != nil {
			continue // a time or rate json cannot write either
		}
		if got, ok := kvstore.DecodeStateFast(data); ok {
			fast++
			sameAsJSON(t, data, got)
		}
		got, err := kvstore.DecodeState(data)
		if err != nil {
			t.Fatalf("DecodeState(%s): %v", data, err)
		}
		sameAsJSON(t, data, got)
	}
	if fast < 500 {
		t.Fatalf("only %d of 5000 records took the fast path", fast)
	}
	for _, bs := range benchStates()[:1] { // a fire's record
		data, err := bs.st.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := kvstore.DecodeStateFast(data); !ok {
			t.Fatalf("a fire's record %s is not read by the fast path", data)
		}
	}
}

// TestStateDecodeFastDeclines: what the fast decoder leaves to
// encoding/json, and DecodeState's answer is encoding/json's.
func TestStateDecodeFastDeclines(t *testing.T) {
	t.Parallel()
	const next = `"next":"2026-11-30T12:00:01Z"`
	for _, data := range []string{
		`{` + next + `,"plan":"p","fires":3} `,         // trailing space
		`{ ` + next + `}`,                              // whitespace
		`{` + next + `,"next":"2026-11-30T12:00:02Z"}`, // a key twice
		`{"Next":"2026-11-30T12:00:01Z"}`,              // another case
		`{` + next + `,"unknown":1}`,                   // unknown key
		`{"plan":"a\"b"}`,                              // an escape
		"{\"plan\":\"a\xffb\"}",                        // invalid UTF-8
		`{"fires":1e3}`, `{"fires":01}`, `{"fires":-1}`, `{"fires":1.0}`, `{"fires":18446744073709551615}`,
		`{"claim":null}`, `{"plan":null}`, `{"ended":null}`,
		`{"claim":{"slot":"2026-11-30T12:00:00Z","trace":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`,
		`{"paused":{"at":"2026-11-30T12:00:00Z"}}`,
		`{"next":"2026-11-30 12:00:01Z"}`, `{"next":""}`,
		`{"skip_next":99999999999}`, `null`, `[]`, `{`, `{"plan":"p",}`, `{}x`,
	} {
		if got, ok := kvstore.DecodeStateFast([]byte(data)); ok {
			t.Errorf("the fast decoder read %q (as %+v); it must leave it to encoding/json", data, got)
		}
		var p plainState
		jerr := json.Unmarshal([]byte(data), &p)
		st, err := kvstore.DecodeState([]byte(data))
		if (err == nil) != (jerr == nil) {
			t.Errorf("DecodeState(%q) error %v, encoding/json %v", data, err, jerr)
		}
		if err == nil {
			sameAsJSON(t, []byte(data), st)
		}
	}
}

// FuzzStateDecodeFast: whatever the fast decoder reads, encoding/json
// reads to the same record.
func FuzzStateDecodeFast(f *testing.F) {
	for _, s := range stateTable() {
		if data, err := s.Encode(); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"next":"2026-11-30T12:00:01Z","plan":"every 1s","claim":{"slot":"2026-11-30T12:00:00Z","token":"t","owner":"o","at":"2026-11-30T12:00:00Z","expires":"2026-11-30T12:00:30Z","seq":12,"window":"window.3"},"fires":3,"skip_next":-2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := kvstore.DecodeStateFast(data); ok {
			sameAsJSON(t, data, got)
		}
	})
}
