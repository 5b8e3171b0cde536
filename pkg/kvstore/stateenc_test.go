package kvstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// plainState and plainWindow have the records' fields without their
// methods: json.Marshal encodes them by reflection, as State.Encode did
// before AppendJSON. They are the reference the encoder is checked
// against.
type (
	plainState  kvstore.State
	plainWindow jsstore.Window
)

// reference is what encoding/json writes for v with HTML escaping off, the
// form AppendJSON promises byte for byte, and what json.Marshal writes (HTML
// escaping on), which it promises to decode to the same value.
func reference(v any) (noHTML, marshal []byte, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, err
	}
	marshal, err = json.Marshal(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), marshal, err
}

// checkState fails unless s.AppendJSON writes what encoding/json writes
// for s (HTML escaping off), decodes to the value json.Marshal's output
// decodes to, and fails exactly when json.Marshal fails.
func checkState(t *testing.T, s kvstore.State) {
	t.Helper()
	want, marshal, wantErr := reference(plainState(s))
	prefix := []byte("prefix")
	got, err := kvstore.AppendJSON(s, prefix)
	if wantErr != nil {
		if err == nil {
			t.Fatalf("encoding/json fails (%v), AppendJSON does not: %s", wantErr, got)
		}
		if !errors.Is(err, kvstore.ErrInvalid) {
			t.Fatalf("AppendJSON error %v does not wrap ErrInvalid", err)
		}
		if string(got) != "prefix" {
			t.Fatalf("AppendJSON failed and left %q, want the buffer unchanged", got)
		}
		return
	}
	if err != nil {
		t.Fatalf("AppendJSON: %v; encoding/json writes %s", err, want)
	}
	got, ok := bytes.CutPrefix(got, prefix)
	if !ok {
		t.Fatalf("AppendJSON dropped the buffer it appends to: %s", got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from encoding/json (a field stateenc.go does not write as it should?):\n got %s\nwant %s", got, want)
	}
	if !utf8.Valid(got) || !json.Valid(got) {
		t.Fatalf("AppendJSON wrote invalid UTF-8 or JSON: %q", got)
	}
	var a, b plainState
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("decode AppendJSON: %v", err)
	}
	if err := json.Unmarshal(marshal, &b); err != nil {
		t.Fatalf("decode json.Marshal: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decoded values differ:\nAppendJSON   %+v\njson.Marshal %+v", a, b)
	}
	enc, err := s.Encode()
	if err != nil || !bytes.Equal(enc, want) {
		t.Fatalf("Encode = %s, %v; want %s", enc, err, want)
	}
	// A State inside an API answer goes through MarshalJSON, which
	// encoding/json escapes again: the same bytes as by reflection.
	api, err := json.Marshal(struct{ S kvstore.State }{s})
	wantAPI, _ := json.Marshal(struct{ S plainState }{plainState(s)})
	if err != nil || !bytes.Equal(api, wantAPI) {
		t.Fatalf("json.Marshal through MarshalJSON = %s, %v; want %s", api, err, wantAPI)
	}
	indented, err := json.MarshalIndent([]kvstore.State{s}, "", "  ")
	wantIndented, _ := json.MarshalIndent([]plainState{plainState(s)}, "", "  ")
	if err != nil || !bytes.Equal(indented, wantIndented) {
		t.Fatalf("json.MarshalIndent through MarshalJSON = %s, %v; want %s", indented, err, wantIndented)
	}
}

// checkWindow is checkState for a window record.
func checkWindow(t *testing.T, w jsstore.Window) {
	t.Helper()
	want, marshal, wantErr := reference(plainWindow(w))
	got, err := w.Encode()
	if wantErr != nil {
		if err == nil || !errors.Is(err, kvstore.ErrInvalid) || len(got) != 0 {
			t.Fatalf("encoding/json fails (%v); AppendJSON = %s, %v", wantErr, got, err)
		}
		return
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from encoding/json:\n got %s (%v)\nwant %s", got, err, want)
	}
	var a, b plainWindow
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(marshal, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decoded values differ:\nAppendJSON   %+v\njson.Marshal %+v", a, b)
	}
	if dec, err := jsstore.DecodeWindow(got); err != nil || !reflect.DeepEqual(plainWindow(dec), a) {
		t.Fatalf("DecodeWindow = %+v, %v", dec, err)
	}
}

// trickyStrings are the strings an encoder gets wrong: every escape
// encoding/json writes, HTML characters, multi-byte and invalid UTF-8
// (a stray continuation byte, a truncated sequence, an encoded
// surrogate, an overlong form), and the separators JavaScript refuses.
var trickyStrings = []string{
	"", "s1", `quote " and \ backslash`, "\x00\x01\x07\x1f\x7f", "\b\f\n\r\t",
	"<script>&amp;</script>", "Noël 日本 🕐", "\u2028\u2029", "\xff", "ok\xc3",
	"\xed\xa0\x80", "\xc0\xaf", "\ufffd", "a\u00e9\u0301", strings.Repeat("x\"", 40),
}

// trickyTimes are times at the edges of what RFC 3339 and
// time.Time.MarshalJSON write: trailing zeros trimmed, zones with
// minutes and seconds, a monotonic reading, a zero time in a zone (still
// zero for omitzero), and years and offsets json.Marshal refuses.
func trickyTimes() []time.Time {
	utc := time.Date(2026, 12, 1, 1, 5, 59, 819750, time.UTC)
	return []time.Time{
		{}, utc, utc.Truncate(time.Second), utc.Truncate(time.Millisecond),
		time.Date(2026, 3, 29, 1, 30, 0, 1, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 3, 29, 1, 30, 0, 100, time.FixedZone("LMT", -(9*3600+30*60+17))),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 0).UTC(), time.Now(), time.Time{}.In(time.FixedZone("X", 3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)),
	}
}

// trickyFloats are backfill rates around encoding/json's switch to
// exponent form, and the values it refuses.
var trickyFloats = []float64{
	0, math.Copysign(0, -1), 1, 2.5, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, 1.0 / 3,
	math.SmallestNonzeroFloat64, math.MaxFloat64, -1e-9, math.NaN(), math.Inf(1), math.Inf(-1),
}

// fill gives v, a field of one of the records, a value drawn from r, or
// its zero value one time in three. It knows the kinds the records'
// fields have; a field of another kind fails the test, so that a new one
// gets values here (and an encoder in stateenc.go) before it can ship.
func fill(t testing.TB, r *rand.Rand, v reflect.Value, path string) {
	if r.IntN(3) == 0 {
		v.SetZero()
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		tt := trickyTimes()
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(tt[r.IntN(len(tt))]))
		} else {
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(400<<30)-(62<<30), r.Int64N(1e9)).UTC()))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		var sb strings.Builder
		for range r.IntN(4) {
			sb.WriteString(trickyStrings[r.IntN(len(trickyStrings))])
		}
		v.SetString(sb.String())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{1, -1, r.Int64(), -r.Int64(), math.MinInt64, math.MaxInt64}[r.IntN(6)])
	case reflect.Uint64:
		v.SetUint([]uint64{1, r.Uint64(), math.MaxUint64}[r.IntN(3)])
	case reflect.Float64:
		v.SetFloat(trickyFloats[r.IntN(len(trickyFloats))])
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, r, p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), r.IntN(4), 3)
		for i := range s.Len() {
			fill(t, r, s.Index(i), path+"[]")
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range r.IntN(3) {
			// Distinct keys: tricky strings with invalid UTF-8 would
			// collide once replaced by U+FFFD.
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, r, e, path+"[]")
			m.SetMapIndex(reflect.ValueOf("k"+strconv.Itoa(i)), e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, r, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("field %s has kind %s, unknown to this test and to the encoder: teach both (stateenc.go)", path, v.Kind())
	}
}

// leaves lists the paths to every field of typ that holds a value (a
// string, number, bool or time), through pointers and slices, as index
// sequences (a slice step is -1).
func leaves(t *testing.T, typ reflect.Type, path []int, name string, out *[]leaf) {
	switch {
	case typ == reflect.TypeFor[time.Time]():
	case typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice:
		leaves(t, typ.Elem(), append(path, -1), name, out)
		return
	case typ.Kind() == reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				t.Fatalf("%s.%s is unexported: the encoder cannot see it either; decide how it is stored", name, f.Name)
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				t.Fatalf("%s.%s has no json name: every field of a record is named on the wire (docs/records.md)", name, f.Name)
			}
			leaves(t, f.Type, append(path[:len(path):len(path)], i), name+"."+f.Name, out)
		}
		return
	}
	*out = append(*out, leaf{name: name, path: path})
}

type leaf struct {
	name string
	path []int
}

// set makes the field at l.path in v non-zero (with value from r),
// allocating the pointers and a one-element slice on the way.
func (l leaf) set(t *testing.T, r *rand.Rand, v reflect.Value) {
	for _, i := range l.path {
		switch {
		case i >= 0:
			v = v.Field(i)
		case v.Kind() == reflect.Pointer:
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		default:
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		}
	}
	for v.IsZero() {
		fill(t, r, v, l.name)
	}
}

// TestEncoderKnowsEveryField walks State and Window with reflect and sets
// each field alone, zero elsewhere (so each omitempty rule is seen on its
// own), then every field at once: a field added to a record that
// AppendJSON does not write, or writes otherwise than encoding/json,
// fails here, before a record loses it.
func TestEncoderKnowsEveryField(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 3))
	for _, rec := range []struct {
		typ   reflect.Type
		check func(*testing.T, reflect.Value)
	}{
		{reflect.TypeFor[kvstore.State](), func(t *testing.T, v reflect.Value) { checkState(t, v.Interface().(kvstore.State)) }},
		{reflect.TypeFor[jsstore.Window](), func(t *testing.T, v reflect.Value) { checkWindow(t, v.Interface().(jsstore.Window)) }},
	} {
		var ls []leaf
		leaves(t, rec.typ, nil, rec.typ.Name(), &ls)
		if len(ls) < rec.typ.NumField() {
			t.Fatalf("%s: %d leaves for %d fields", rec.typ, len(ls), rec.typ.NumField())
		}
		all := reflect.New(rec.typ).Elem()
		for _, l := range ls {
			t.Run(l.name, func(t *testing.T) {
				for range 20 {
					v := reflect.New(rec.typ).Elem()
					l.set(t, r, v)
					rec.check(t, v)
				}
			})
			// Keep the record with every field set encodable, so that
			// its check compares output, not two errors.
			for l.set(t, r, all); !encodes(all); l.set(t, r, all) {
				clearLeaf(l, all)
			}
		}
		t.Run(rec.typ.Name()+"/all", func(t *testing.T) { rec.check(t, all) })
	}
}

// encodes reports whether json.Marshal accepts v.
func encodes(v reflect.Value) bool {
	_, err := json.Marshal(v.Interface())
	return err == nil
}

// clearLeaf zeroes the field at l.path in v (which set allocated).
func clearLeaf(l leaf, v reflect.Value) {
	for _, i := range l.path {
		switch {
		case i >= 0:
			v = v.Field(i)
		case v.Kind() == reflect.Pointer:
			v = v.Elem()
		default:
			v = v.Index(0)
		}
	}
	v.SetZero()
}

// stateTable holds states with every field zero and non-zero, tricky
// strings, times and numbers; FuzzStateEncode starts from it.
func stateTable() []kvstore.State {
	states := []kvstore.State{{}}
	for _, bs := range benchStates() {
		states = append(states, bs.st)
	}
	full := states[len(states)-1]
	for _, s := range trickyStrings {
		st := full
		st.Plan, st.NextReason, st.Owner = s, s, s
		c := *full.Claim
		c.Token, c.Note, c.Window = s, s, s
		st.Claim = &c
		states = append(states, st)
	}
	for _, tm := range trickyTimes() {
		st := full
		st.Next, st.UpdatedAt = tm, tm
		c := *full.Claim
		c.At, c.Nominal = tm, tm
		st.Claim = &c
		states = append(states, st)
	}
	for _, f := range trickyFloats {
		st := full
		bf := *full.Backfill
		bf.Rate = f
		st.Backfill = &bf
		states = append(states, st)
	}
	// A trigger and its claim with the trace contexts a traced request
	// leaves (tracestate with the W3C's list syntax, which needs no
	// escaping, and with a quote, which does).
	traced := full
	tc := &kvstore.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}
	tc2 := &kvstore.TraceContext{TraceParent: tc.TraceParent, TraceState: `a="b"<&>`}
	c := *full.Claim
	c.Trace = tc
	traced.Claim = &c
	traced.Triggers = []kvstore.Trigger{{At: full.UpdatedAt, Note: "n", Trace: tc}, {At: full.UpdatedAt, Trace: tc2}, {At: full.UpdatedAt}}
	states = append(states, traced)
	empty := full
	empty.Triggers = []kvstore.Trigger{}
	empty.Claim, empty.Paused, empty.Backfill, empty.Running = &kvstore.Claim{}, &kvstore.Pause{}, &kvstore.Backfill{}, &kvstore.Running{}
	return append(states, empty)
}

func TestStateEncodeTable(t *testing.T) {
	t.Parallel()
	for _, s := range stateTable() {
		checkState(t, s)
	}
	for _, w := range []jsstore.Window{
		{},
		{Shard: 28, Seq: 3, Token: "9358a99ec31a", Owner: "s1", Slots: []jsstore.WindowSlot{}},
		{Shard: -1, Seq: math.MaxUint64, Token: "<&>", Owner: "\xff\u2028", At: time.Now(), Expires: time.Now().Add(time.Second),
			Slots: []jsstore.WindowSlot{{Schedule: "x3", Slot: time.Unix(1, 5).UTC()}, {Schedule: "a\"b", Reason: "moved"}}},
		{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Slots: []jsstore.WindowSlot{{Slot: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	} {
		checkWindow(t, w)
	}
}

// TestStateEncodeProperty: random states and windows, every field zero or
// not, encode as encoding/json encodes them.
func TestStateEncodeProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 33))
	for range 3000 {
		var s kvstore.State
		fill(t, r, reflect.ValueOf(&s).Elem(), "State")
		checkState(t, s)
		var w jsstore.Window
		fill(t, r, reflect.ValueOf(&w).Elem(), "Window")
		checkWindow(t, w)
	}
}

// FuzzStateEncode starts from the table's states, encoded, and lets the
// fuzzer change the record and a string it writes, unchecked, into the
// string fields that mask selects (as raw bytes: invalid UTF-8 survives,
// which decoding JSON would repair). Every result encodes as
// encoding/json encodes it.
func FuzzStateEncode(f *testing.F) {
	for i, s := range stateTable() {
		rec, err := json.Marshal(plainState(s))
		if err != nil {
			rec = []byte("{}")
		}
		f.Add(rec, trickyStrings[i%len(trickyStrings)], uint64(i)*0x9e3779b97f4a7c15)
	}
	f.Fuzz(func(t *testing.T, rec []byte, text string, mask uint64) {
		var p plainState
		if json.Unmarshal(rec, &p) != nil {
			p = plainState{}
		}
		s := kvstore.State(p)
		bit := 0
		setStrings(reflect.ValueOf(&s).Elem(), text, mask, &bit)
		checkState(t, s)
	})
}

// setStrings writes text into the string fields of v whose turn (in
// field order, through set pointers and slices) is a set bit of mask.
func setStrings(v reflect.Value, text string, mask uint64, bit *int) {
	switch v.Kind() {
	case reflect.String:
		if mask&(1<<(*bit%64)) != 0 {
			v.SetString(text)
		}
		*bit++
	case reflect.Pointer:
		if !v.IsNil() {
			setStrings(v.Elem(), text, mask, bit)
		}
	case reflect.Slice:
		for i := range v.Len() {
			setStrings(v.Index(i), text, mask, bit)
		}
	case reflect.Struct:
		if v.Type() != reflect.TypeFor[time.Time]() {
			for i := range v.NumField() {
				setStrings(v.Field(i), text, mask, bit)
			}
		}
	}
}
