package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// TestWakeupsFilterAndOrder: a filter of run and workflow keeps the timers
// matching both, in run then step order, with their whole payload (a
// listing of the admin API leaves one over 1 KiB out; this does not).
func TestWakeupsFilterAndOrder(t *testing.T) {
	t.Parallel()
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	big := []byte(`{"blob":"` + strings.Repeat("x", 2048) + `"}`)
	for _, r := range []wakeup.Request{
		{Run: "r/2", Step: "b", Workflow: "wf", When: "1h", Labels: map[string]string{"team": "billing"}},
		{Run: "r/1", Step: "z", Workflow: "wf", When: "1h", Payload: big, Labels: map[string]string{"team": "billing", "tier": "gold"}},
		{Run: "r/1", Step: "a", Workflow: "wf", When: "1h"},
		{Run: "r/1", Step: "m", Workflow: "other", When: "1h", Labels: map[string]string{"team": "ops"}},
	} {
		if _, err := c.Wakeup(ctx, r); err != nil {
			t.Fatalf("Wakeup %s/%s: %v", r.Run, r.Step, err)
		}
	}
	list := func(f wakeup.Filter) string {
		t.Helper()
		var got []string
		for info, err := range c.Wakeups(ctx, f) {
			if err != nil {
				t.Fatalf("Wakeups(%+v): %v", f, err)
			}
			got = append(got, fmt.Sprintf("%s/%s:%s:%d", info.Run, info.Step, info.Workflow, len(info.Payload)))
		}
		return strings.Join(got, " ")
	}
	bigLen := len(big)
	for _, tc := range []struct {
		f    wakeup.Filter
		want string
	}{
		{wakeup.Filter{}, fmt.Sprintf("r/1/a:wf:0 r/1/m:other:0 r/1/z:wf:%d r/2/b:wf:0", bigLen)},
		{wakeup.Filter{Run: "r/1"}, fmt.Sprintf("r/1/a:wf:0 r/1/m:other:0 r/1/z:wf:%d", bigLen)},
		{wakeup.Filter{Workflow: "wf"}, fmt.Sprintf("r/1/a:wf:0 r/1/z:wf:%d r/2/b:wf:0", bigLen)},
		{wakeup.Filter{Run: "r/1", Workflow: "other"}, "r/1/m:other:0"},
		{wakeup.Filter{Run: "r/3"}, ""},
		// A label selector, as `wakeup ls -l` takes it, with the others.
		{wakeup.Filter{Selector: "team=billing"}, fmt.Sprintf("r/1/z:wf:%d r/2/b:wf:0", bigLen)},
		{wakeup.Filter{Selector: "team in (billing,ops),tier!=gold"}, "r/1/m:other:0 r/2/b:wf:0"},
		{wakeup.Filter{Selector: "!team"}, "r/1/a:wf:0"},
		{wakeup.Filter{Run: "r/1", Selector: "team"}, fmt.Sprintf("r/1/m:other:0 r/1/z:wf:%d", bigLen)},
		{wakeup.Filter{Workflow: "wf", Selector: "team=ops"}, ""},
	} {
		if got := list(tc.f); got != tc.want {
			t.Errorf("Wakeups(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}

	// Breaking out of the loop ends the iteration.
	n := 0
	for range c.Wakeups(ctx, wakeup.Filter{}) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("a loop that breaks at once ran %d times", n)
	}
}

// TestWakeupsBadSelector: an invalid selector is an error naming the
// field selector, yielded once.
func TestWakeupsBadSelector(t *testing.T) {
	t.Parallel()
	c, _, stop := example()
	defer stop()
	var errs []error
	for _, err := range c.Wakeups(context.Background(), wakeup.Filter{Selector: "team in billing"}) {
		errs = append(errs, err)
	}
	var fe *kvstore.FieldError
	if len(errs) != 1 || !errors.As(errs[0], &fe) || fe.Field != "selector" {
		t.Fatalf("errors %v, want one FieldError on selector", errs)
	}
}

// TestWakeupsError: a failed read is yielded once, and ends the iteration.
func TestWakeupsError(t *testing.T) {
	t.Parallel()
	c, _, stop := example()
	defer stop()
	if _, err := c.Wakeup(context.Background(), wakeup.Request{Run: "r", Step: "s", Workflow: "wf", When: "1h"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errs []error
	for info, err := range c.Wakeups(ctx, wakeup.Filter{}) {
		if err == nil {
			t.Fatalf("a cancelled context listed %+v", info)
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("errors %v, want one context.Canceled", errs)
	}
}

// TestCancelWakeupsAndRearmRefuse: bad input names its field and changes
// nothing; a run without timers cancels none.
func TestCancelWakeupsAndRearmRefuse(t *testing.T) {
	t.Parallel()
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	if _, err := c.Wakeup(ctx, wakeup.Request{Run: "r", Step: "s", Workflow: "wf", When: "1h"}); err != nil {
		t.Fatal(err)
	}
	var fe *kvstore.FieldError
	if _, err := c.CancelWakeups(ctx, ""); !errors.As(err, &fe) || fe.Field != "run" {
		t.Fatalf("CancelWakeups(\"\"): %v, want a FieldError on run", err)
	}
	if n, err := c.CancelWakeups(ctx, "nobody"); n != 0 || err != nil {
		t.Fatalf("CancelWakeups(nobody) = %d, %v; want 0, nil", n, err)
	}

	m := wakeup.Meta{Run: "r", Step: "s", Workflow: "wf", Rearms: 1}
	if _, err := c.RearmWakeup(ctx, m, nil, time.Now().Add(-time.Second)); !errors.As(err, &fe) || fe.Field != "at" {
		t.Fatalf("RearmWakeup in the past: %v, want a FieldError on at", err)
	}
	if _, err := c.RearmWakeup(ctx, wakeup.Meta{Run: "r", Step: "s", Workflow: "w.f"}, nil, time.Now().Add(time.Hour)); !errors.As(err, &fe) || fe.Field != "workflow" {
		t.Fatalf("RearmWakeup of workflow w.f: %v, want a FieldError on workflow", err)
	}
	if info, err := c.GetWakeup(ctx, "r", "s"); err != nil || info.Rearms != 0 || info.When != "1h" {
		t.Fatalf("refused re-arms changed the timer: %+v, %v", info, err)
	}

	// A re-arm replaces the pending timer, counting on from the message's
	// count.
	info, err := c.RearmWakeup(ctx, m, []byte(`{"n":2}`), time.Now().Add(time.Hour))
	if err != nil || info.Rearms != 2 || info.When != "" || string(info.Payload) != `{"n":2}` {
		t.Fatalf("RearmWakeup = %+v, %v; want rearms 2 with the new payload", info, err)
	}
	if got, err := c.GetWakeup(ctx, "r", "s"); err != nil || got.Rearms != 2 || !got.Due.Equal(info.Due) {
		t.Fatalf("GetWakeup after the re-arm = %+v, %v", got, err)
	}
	if n, err := c.CancelWakeups(ctx, "r"); n != 1 || err != nil {
		t.Fatalf("CancelWakeups(r) = %d, %v; want 1, nil", n, err)
	}
	if _, err := c.GetWakeup(ctx, "r", "s"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetWakeup after CancelWakeups: %v, want ErrNotFound", err)
	}
}
