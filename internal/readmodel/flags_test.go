package readmodel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFlagsNameOneState: every schedule is in exactly one listing state,
// the same whether a listing holds its flags (from the raw record) or a
// reader decoded it (StateOf).
func TestFlagsNameOneState(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		record  string // "" for none
		invalid bool
		listed  bool
		want    string
	}{
		{"no record", "", false, false, admin.StatePlanned},
		{"listed, no record", "", false, true, admin.StateEnded},
		{"record", `{"plan":"p"}`, false, false, admin.StateActive},
		{"record and listed", `{"plan":"p"}`, false, true, admin.StateActive},
		{"paused", `{"paused":{"note":"x"}}`, false, false, admin.StatePaused},
		{"ended", `{"ended":true,"paused":{}}`, false, false, admin.StateEnded},
		{"invalid beats ended", `{"ended":true}`, true, true, admin.StateInvalid},
		{"undecodable record", `{"ended":`, false, false, admin.StateActive},
	} {
		var f readmodel.Flags
		if tc.record != "" {
			f = readmodel.RecordFlags([]byte(tc.record))
		}
		if tc.invalid {
			f |= readmodel.FlagInvalid
		}
		if tc.listed {
			f |= readmodel.FlagListed
		}
		if got := f.State(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if tc.listed || tc.record == `{"ended":` {
			continue // a reader's view has no list flag; an undecodable record is not shown
		}
		v := admin.ScheduleInfo{ID: "s"}
		if tc.invalid {
			v.Invalid = "bad"
		}
		if tc.record != "" {
			st, err := kvstore.DecodeState([]byte(tc.record))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			v.State = &st
		} else {
			v.State, v.Planned = &kvstore.State{Next: now}, true
		}
		if got := readmodel.StateOf(v); got != tc.want {
			t.Errorf("%s: StateOf %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestRunnerFollowsAgainAfterAFailure: a follow that fails is reported and
// run again; Stop ends the one running and waits for it.
func TestRunnerFollowsAgainAfterAFailure(t *testing.T) {
	var r readmodel.Runner
	r.Stop() // before Run: a no-op
	calls := make(chan int, 8)
	failed := make(chan error, 8)
	n := 0
	r.Run(context.Background(), time.Millisecond, func(ctx context.Context) error {
		n++
		calls <- n
		if n < 3 {
			return errors.New("watch lost")
		}
		<-ctx.Done()
		return ctx.Err()
	}, func(err error) { failed <- err })
	deadline := time.After(10 * time.Second)
	for want := 1; want <= 3; want++ {
		select {
		case got := <-calls:
			if got != want {
				t.Fatalf("follow call %d, want %d", got, want)
			}
		case <-deadline:
			t.Fatalf("follow not called a %dth time", want)
		}
	}
	r.Stop()
	if len(failed) != 2 {
		t.Fatalf("%d failures reported, want 2 (the stop is none)", len(failed))
	}
}
