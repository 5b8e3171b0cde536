package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheck(t *testing.T) {
	tests := []struct {
		doc, path, key, field string // key "": no duplicate
	}{
		{doc: `{"id":"a","spec":{"workflow":"w"}}`},
		{doc: `{"a":1,"A":2}`}, // JSON keys are case-sensitive
		{doc: `[{"a":1},{"a":2}]`},
		{doc: `{"a":[1,2,{"b":null}],"c":"}\"{","d":true,"e":-1.5e3}`},
		{doc: `{}`},
		{doc: `  "just a string" `},
		{doc: `{"id":"a","id":"b"}`, key: "id", field: "id"},
		{doc: `{"id":"a","\u0069d":"b"}`, key: "id", field: "id"},
		{doc: `{"spec":{"input":{"x":1,"y":{},"x":2}}}`, path: "spec.input", key: "x", field: "spec"},
		{doc: `{"holidays":[{"name":"a"},{"name":"b","name":"c"}]}`, path: "holidays[1]", key: "name", field: "holidays"},
		{doc: `[[{"k":1,"k":1}]]`, path: "[0][0]", key: "k", field: ""},
		{doc: `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`, key: "k3", field: "k3"},
		// Malformed documents are the decoder's to report.
		{doc: `{"a":1,"b"`},
		{doc: `{"a" 1, "a": 2}`},
		{doc: ``},
	}
	for _, tc := range tests {
		err := Check([]byte(tc.doc))
		if tc.key == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tc.doc, err)
			}
			continue
		}
		var dup *DuplicateKeyError
		if !errors.As(err, &dup) || dup.Key != tc.key || dup.Path != tc.path || dup.Field() != tc.field {
			t.Errorf("%s: %#v, want key %q at %q (field %q)", tc.doc, err, tc.key, tc.path, tc.field)
		}
	}
}

// FuzzCheck compares Check with a reference built on json.Decoder's
// token stream: on every document encoding/json accepts, both find a
// duplicate or neither does.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `[1,"x",{"y":null}]`, `{"\u0061":1,"a":2}`, `{"a":{"a":1},"b":{"a":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data)
		if !json.Valid(data) {
			return
		}
		want := referenceDuplicate(data)
		if (err != nil) != want {
			t.Fatalf("Check(%q) = %v, reference finds a duplicate: %v", data, err, want)
		}
	})
}

// referenceDuplicate reports whether an object of data repeats a key.
func referenceDuplicate(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.key {
			if top.keys[s] {
				return true
			}
			top.keys[s] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key comes next
		}
	}
}

func TestDepth(t *testing.T) {
	tests := []struct {
		doc  string
		want int
	}{
		{`1`, 0}, {`"[{"`, 0}, {`{}`, 1}, {`[1,2]`, 1}, {`{"a":[1]}`, 2},
		{`{"a":"]]]\"[[[","b":[{"c":[]}]}`, 4}, {`[[],[[]],[]]`, 3},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), 5000},
	}
	for _, tc := range tests {
		if got := Depth([]byte(tc.doc)); got != tc.want {
			t.Errorf("Depth(%.40s) = %d, want %d", tc.doc, got, tc.want)
		}
	}
}

// FuzzDepth: Depth never panics, and on valid JSON it is the nesting
// encoding/json finds (checked by re-nesting the decoded value).
func FuzzDepth(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"]"}]}`, `[[[]]]`, `"\\"`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Depth(data)
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if want := nesting(v); d != want {
			t.Fatalf("Depth(%q) = %d, want %d", data, d, want)
		}
	})
}

func nesting(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n = max(n, nesting(e))
		}
		return n + 1
	case []any:
		for _, e := range v {
			n = max(n, nesting(e))
		}
		return n + 1
	}
	return 0
}
