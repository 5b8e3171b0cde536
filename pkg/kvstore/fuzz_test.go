package kvstore_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// FuzzDecodeSpec: any bytes in sched_specs decode to a spec or an error
// naming a field, never a panic; an accepted spec survives Encode and
// DecodeSpec unchanged; validating and compiling it never panics, and a
// compiled one answers checkFires.
func FuzzDecodeSpec(f *testing.F) {
	for _, s := range []string{
		`{"workflow":"wf","cron":"0 9 * * 1-5","tz":"Europe/Paris","input":{"a":1}}`,
		`{"workflow":"wf","every":"90m","anchor":"2026-01-01T00:15:00Z","misfire":"fire_all","catchup_window":"1h"}`,
		`{"workflow":"wf","at":"2030-01-01T00:00:00Z","input":[1,2]}`,
		`{"workflow":"wf","business_day":-1,"time":"17:00","calendar_inline":{"zone":"UTC"}}`,
		`{"workflow":"wf","cron":"0 9 * * *","calendar_inline":{"zone":"UTC","holidays":[{"name":"x","from":"01-01","to":"12-31"}]}}`,
		`{"workflow":"wf","cron":"CRON_TZ=Asia/Tokyo 0 0 L * *","dst_gap":"shift","overlap":"cancel_other"}`,
		`{"workflow":"wf","every":"1s","start":"2026-01-01T00:00:00Z","limit":3}`,
		`{"workflow":"wf","every":"1s","every":"2s"}`, `{}`, `null`, `[`, `{"workflow":5}`,
		// Times at and past the supported range (issue 52).
		`{"workflow":"wf","at":"2262-04-11T23:47:17Z"}`, `{"workflow":"wf","at":"9999-12-31T23:00:00-05:00"}`,
		`{"workflow":"wf","every":"1h","anchor":"0001-01-01T00:00:00Z","start":"1969-12-31T23:59:59+01:00","end":"2261-12-31T23:59:59-00:01"}`,
		`{"workflow":"wf","every":"1s","input":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := kvstore.DecodeSpec(data)
		if err != nil {
			return
		}
		enc, err := spec.Encode()
		if err != nil {
			t.Fatalf("encode a decoded spec: %v", err)
		}
		again, err := kvstore.DecodeSpec(enc)
		if err != nil {
			t.Fatalf("a decoded spec does not decode again: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(normalize(spec), normalize(again)) {
			t.Fatalf("round trip changed the spec:\n%+v\n%+v", spec, again)
		}
		// What the scheduler accepts on read (CheckRecord) the API's
		// validator accepts too, and its input nests at most fieldcheck.MaxJSONDepth.
		if _, err := compile.CheckRecord(spec, "fuzz", nil, nil, now); err == nil {
			if verr := compile.Validate(spec, "fuzz", nil); verr != nil {
				t.Fatalf("read accepts what the API refuses: %v", verr)
			}
		}
		if compile.Validate(spec, "fuzz", nil) != nil {
			return
		}
		// A valid spec's times are in the supported range, and encode.
		for _, p := range []*time.Time{spec.At, spec.Start, spec.End} {
			if p != nil && !kvstore.InTimeRange(*p) {
				t.Fatalf("a valid spec has a time outside the supported range: %s", *p)
			}
		}
		if a := spec.Anchor; a != nil && (a.Before(time.Unix(0, 0)) || !a.Before(kvstore.MaxTime)) {
			t.Fatalf("a valid spec has an anchor outside the supported range: %s", *a)
		}
		if d := strictjson.Depth(spec.Input); d > fieldcheck.MaxJSONDepth {
			t.Fatalf("input %d deep validates", d)
		}
		c, err := compile.Compile(spec, "fuzz", nil, nil)
		if err != nil {
			return
		}
		_, _ = compile.CheckRecord(spec, "fuzz", nil, nil, now) // the calendar's ten-year check
		_ = c.Schedule.Next(now)
	})
}

// normalize makes the spec comparable across a JSON round trip (times lose
// their location, raw JSON its spacing).
func normalize(s kvstore.Spec) kvstore.Spec {
	for _, p := range []**time.Time{&s.Anchor, &s.At, &s.Start, &s.End} {
		if *p != nil {
			u := (*p).UTC()
			*p = &u
		}
	}
	s.Input, s.CalendarInline = nil, nil
	return s
}

// FuzzDecodeState: any bytes in sched_state decode to a state or an error,
// never a panic, and a decoded state survives Encode and DecodeState.
func FuzzDecodeState(f *testing.F) {
	for _, s := range []string{
		`{"next":"2026-11-30T12:00:01Z","plan":"every 1s","fires":3}`,
		`{"next":"2099-01-01T00:00:00Z","plan":"every 1s","claim":{"slot":"2026-11-30T12:00:00Z","token":"t","owner":"o","at":"2026-11-30T12:00:00Z","expires":"2026-11-30T12:00:30Z"}}`,
		`{"plan":"","paused":{"note":"n","at":"2026-11-30T12:00:00Z"},"triggers":[{"at":"2026-11-30T12:00:00Z"}],"skip_next":-3}`,
		`{"next":"1900-01-01T00:00:00Z","plan":"p","backfill":{"from":"1900-01-01T00:00:00Z","to":"2026-01-01T00:00:00Z","rate":1e9}}`,
		`{"fires":-1}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := kvstore.DecodeState(data)
		if err != nil {
			return
		}
		enc, err := st.Encode()
		if err != nil {
			t.Fatalf("encode a decoded state: %v", err)
		}
		if _, err := kvstore.DecodeState(enc); err != nil {
			t.Fatalf("a decoded state does not decode again: %v\n%s", err, enc)
		}
	})
}
