package kvstore_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// sameSpecAsJSON fails t unless data, which the fast decoder read as got,
// is read by DecodeSpec's encoding/json path without error to the same
// spec.
func sameSpecAsJSON(t *testing.T, data []byte, got kvstore.Spec) {
	t.Helper()
	want, err := kvstore.DecodeSpecSlow(data)
	if err != nil {
		t.Fatalf("the fast decoder read %q, which the strict decoder refuses: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nfast read %+v\njson read %+v", data, got, want)
	}
}

// TestSpecDecodeFastProperty: random specs as Encode writes them are read
// by the fast decoder when they are in its form (no input, inline
// calendar or trace, no escaped string), to what encoding/json reads, and
// DecodeSpec gives the same for all of them.
func TestSpecDecodeFastProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 35))
	fast := 0
	for i := range 5000 {
		var s kvstore.Spec
		v := reflect.ValueOf(&s).Elem()
		for j := range v.NumField() {
			switch name := v.Type().Field(j).Name; name {
			case "Input", "CalendarInline": // raw JSON: set below
			default:
				fill(t, r, v.Field(j), "Spec."+name)
			}
		}
		if i%2 == 1 { // half not in the common form
			s.Input, s.CalendarInline = json.RawMessage(`{"a":[1,"x"]}`), json.RawMessage(`{"zone":"UTC"}`)
		} else { // the other half in it, but for a few tricky strings
			s.Trace = nil
			for j := range v.NumField() {
				if f := v.Field(j); f.Kind() == reflect.String && r.IntN(60) > 0 {
					f.SetString([]string{"", "w", "0 9 * * MON-FRI", "Europe/Paris", "24h", "é ü 日本"}[r.IntN(6)])
				}
			}
		}
		data, err := s.Encode()
		if err != nil {
			continue // random bytes for input or calendar_inline
		}
		if got, ok := kvstore.DecodeSpecFast(data); ok {
			fast++
			sameSpecAsJSON(t, data, got)
		}
		got, err := kvstore.DecodeSpec(data)
		if err != nil {
			t.Fatalf("DecodeSpec(%s): %v", data, err)
		}
		sameSpecAsJSON(t, data, got)
	}
	if fast < 250 { // ~450: random ints, times and strings often are not in the form
		t.Fatalf("only %d of 5000 specs took the fast path", fast)
	}
	for _, s := range []kvstore.Spec{
		{Workflow: "billing", Cron: "0 9 * * MON-FRI", TZ: "Europe/Paris", Calendar: "fr", HolidayRoll: "next_business_day"},
		{Workflow: "scale", Every: "24h", MisfireThreshold: "1h"},
		{Workflow: "scale", Every: "24h", Labels: map[string]string{"team": "billing", "tier": "gold"}},
	} {
		data, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := kvstore.DecodeSpecFast(data); !ok {
			t.Fatalf("a plain spec %s is not read by the fast path", data)
		}
	}
}

// TestSpecDecodeFastDeclines: what the fast decoder leaves to
// encoding/json, and DecodeSpec's answer (an error or not) is the strict
// decoder's.
func TestSpecDecodeFastDeclines(t *testing.T) {
	t.Parallel()
	const wf = `"workflow":"w"`
	for _, data := range []string{
		`{` + wf + `,"every":"1s"} `,        // trailing space
		`{ ` + wf + `}`,                     // whitespace
		`{` + wf + `,"workflow":"x"}`,       // a key twice (an error)
		`{"Workflow":"w"}`,                  // another case
		`{` + wf + `,"unknown":1}`,          // unknown key (an error)
		`{` + wf + `,"input":{"a":1}}`,      // input
		`{` + wf + `,"calendar_inline":{}}`, // inline calendar
		`{` + wf + `,"trace":{}}`,           // trace
		`{"workflow":"a\"b"}`,               // an escape
		"{\"workflow\":\"a\xffb\"}",         // invalid UTF-8
		`{"limit":1e3}`, `{"limit":01}`, `{"limit":1.0}`, `{"limit":99999999999}`,
		`{"anchor":null}`, `{"workflow":null}`, `{"business_hours_only":null}`,
		`{"at":"2026-11-30 12:00:01Z"}`, `{"at":""}`, `{"at":1}`,
		`null`, `[]`, `{`, `{"workflow":"w",}`, `{}x`, `{"workflow":"w"}{}`,
	} {
		if got, ok := kvstore.DecodeSpecFast([]byte(data)); ok {
			t.Errorf("the fast decoder read %q (as %+v); it must leave it to encoding/json", data, got)
		}
		want, werr := kvstore.DecodeSpecSlow([]byte(data))
		got, err := kvstore.DecodeSpec([]byte(data))
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("DecodeSpec(%q) error %v, the strict decoder's %v", data, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeSpec(%q) = %+v, the strict decoder's %+v", data, got, want)
		}
	}
}

// FuzzSpecDecodeFast: whatever the fast decoder reads, the strict decoder
// reads to the same spec, without error.
func FuzzSpecDecodeFast(f *testing.F) {
	for _, s := range []kvstore.Spec{
		{Workflow: "w", Cron: "0 9 * * MON-FRI", TZ: "Europe/Paris", Calendar: "fr", HolidayRoll: "next_business_day", BusinessHoursOnly: true},
		{Workflow: "w", Every: "24h", MisfireThreshold: "1h", Misfire: kvstore.MisfireFireOnce, Overlap: kvstore.OverlapSkip, Limit: 3, BusinessDay: -1},
	} {
		if data, err := s.Encode(); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"workflow":"w","at":"2026-11-30T12:00:01+02:00","start":"2026-11-30T12:00:00Z","end":"2027-01-01T00:00:00Z","time":"09:00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := kvstore.DecodeSpecFast(data); ok {
			sameSpecAsJSON(t, data, got)
		}
	})
}

// BenchmarkDecodeSpec: a cron spec with a calendar, as a scheduler reads
// each at a start.
func BenchmarkDecodeSpec(b *testing.B) {
	data, err := json.Marshal(kvstore.Spec{Workflow: "billing", Cron: "0 9 * * MON-FRI", TZ: "Europe/Paris", Calendar: "fr", HolidayRoll: "next_business_day"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte) (kvstore.Spec, error)
	}{{"fast", kvstore.DecodeSpec}, {"json", kvstore.DecodeSpecSlow}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
