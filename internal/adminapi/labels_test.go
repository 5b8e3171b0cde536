package adminapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestListBySelector: schedule.list, status and wakeup.list keep the
// schedules and timers whose labels the request's selector matches, with
// the total counting only those; a bad selector is refused naming the
// field, and a schedule's labels change in place.
func TestListBySelector(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	teams := []string{"billing", "search", ""}
	for i := range 9 {
		spec := kvstore.Spec{Workflow: "w", Every: "1h"}
		if team := teams[i%3]; team != "" {
			spec.Labels = map[string]string{"team": team, "tier": []string{"gold", "silver"}[i%2]}
		}
		a.ok("schedule.create", admin.PutRequest{ID: fmt.Sprintf("s%d", i), Spec: mustJSON(t, spec)}, nil)
		wr := admin.WakeupRequest{Run: fmt.Sprintf("r%d", i), Step: "s", Workflow: "w", When: "1h"}
		if team := teams[i%3]; team != "" {
			wr.Labels = map[string]string{"team": team}
		}
		a.ok("wakeup.add", wr, nil)
	}
	ids := func(sel string) ([]string, int) {
		var pg admin.Page[admin.ScheduleInfo]
		a.ok("schedule.list", admin.ListRequest{Selector: sel, Limit: 2}, &pg)
		var out []string
		for _, it := range pg.Items {
			out = append(out, it.ID)
		}
		return out, pg.Total
	}
	for sel, want := range map[string][]string{
		"team=billing":             {"s0", "s3", "s6"},
		"team=billing,tier!=gold":  {"s3"},
		"team in (billing,search)": {"s0", "s1", "s3", "s4", "s6", "s7"},
		"!team":                    {"s2", "s5", "s8"},
		"team notin (billing)":     {"s1", "s2", "s4", "s5", "s7", "s8"},
	} {
		page, total := ids(sel)
		if total != len(want) || !slices.Equal(page, want[:min(2, len(want))]) {
			t.Errorf("selector %q: page %v of %d, want %v of %d", sel, page, total, want[:min(2, len(want))], len(want))
		}
	}
	var sp admin.StatusPage
	a.ok("status", admin.ListRequest{Selector: "tier=gold"}, &sp)
	if sp.Total != 3 || sp.Summary.Schedules != 9 {
		t.Errorf("status tier=gold: %d rows of %d schedules, want 3 of 9", sp.Total, sp.Summary.Schedules)
	}
	var timers admin.Page[admin.TimerItem]
	a.ok("wakeup.list", admin.WakeupListRequest{Selector: "team=search"}, &timers)
	if timers.Total != 3 || len(timers.Items) != 3 || timers.Items[0].Labels["team"] != "search" {
		t.Errorf("wakeup.list team=search: %+v", timers)
	}
	a.refused("schedule.list", admin.ListRequest{Selector: "=billing"}, admin.CodeInvalid, "selector")
	a.refused("schedule.list", admin.ListRequest{Selector: "team billing"}, admin.CodeInvalid, "selector")
	a.refused("wakeup.list", admin.WakeupListRequest{Selector: "team in billing"}, admin.CodeInvalid, "selector")
	a.refused("schedule.create", admin.PutRequest{ID: "bad", Spec: mustJSON(t, kvstore.Spec{Workflow: "w", Every: "1h",
		Labels: map[string]string{"team": "a b"}})}, admin.CodeInvalid, "labels.team")
	a.refused("wakeup.add", admin.WakeupRequest{Run: "bad", Step: "s", Workflow: "w", When: "1h",
		Labels: map[string]string{"te am": "x"}}, admin.CodeInvalid, `labels."te am"`)

	// Relabelling is an update that the listing follows.
	a.ok("schedule.create", admin.PutRequest{ID: "s2", Upsert: true, Spec: mustJSON(t, kvstore.Spec{Workflow: "w", Every: "1h",
		Labels: map[string]string{"team": "billing"}})}, nil)
	if page, total := ids("team=billing"); total != 4 || !slices.Equal(page, []string{"s0", "s2"}) {
		t.Errorf("after relabelling s2: %v of %d", page, total)
	}
}
