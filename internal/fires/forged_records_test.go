package fires_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestForgedSpecAndCalendarRecordsAreInvalid: records written straight
// into the buckets are checked exactly as the admin API checks what it
// writes. A spec whose input nests 5,000 deep (the API refuses it: workers
// in other languages cannot decode it) and a schedule naming a calendar
// whose record does not parse are reported invalid, saying why, and never
// fire; a valid schedule beside them keeps firing.
func TestForgedSpecAndCalendarRecordsAreInvalid(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	events, err := h.js.Conn().SubscribeSync("sched.event.invalid.>")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Unsubscribe()
	l := h.store.Layout().WithDefaults()
	specs, err := h.js.KeyValue(ctx, l.SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	cals, err := h.js.KeyValue(ctx, l.CalendarsBucket)
	if err != nil {
		t.Fatal(err)
	}
	deep := `{"workflow":"wf","every":"1s","input":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	if _, err := specs.Put(ctx, "deep", []byte(deep)); err != nil {
		t.Fatal(err)
	}
	if _, err := cals.Put(ctx, "forged", []byte(`{"zone":"UTC","holidays":"every day"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(ctx, "oncal", []byte(`{"workflow":"wf","every":"1s","calendar":"forged"}`)); err != nil {
		t.Fatal(err)
	}
	h.engine(fires.Config{})
	h.put("good", kvstore.Spec{Workflow: "wf", Every: "1s"})
	want := map[string]string{"deep": "input", "oncal": "calendar"}
	seen := map[string]kvstore.Event{}
	for len(seen) < len(want) {
		ev := nextEvent(t, events, 15*time.Second, "invalid events")
		if _, ok := want[ev.Schedule]; ok {
			seen[ev.Schedule] = ev
		}
	}
	if ev := seen["deep"]; ev.Field != "input" || !strings.Contains(ev.Reason, "nested 5000 deep, over the maximum of 64") {
		t.Errorf("deep input: event %+v", ev)
	}
	if ev := seen["oncal"]; ev.Field != "calendar" || !strings.Contains(ev.Reason, "invalid") || !strings.Contains(ev.Reason, "holidays") {
		t.Errorf("forged calendar: event %+v, want its parse error named", ev)
	}
	// The API refuses what the engine refuses.
	var spec kvstore.Spec
	if err := json.Unmarshal([]byte(deep), &spec); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.PutSpec(ctx, "deep2", spec); err == nil || !strings.Contains(err.Error(), "nested 5000 deep") {
		t.Errorf("PutSpec of the deep input: %v", err)
	}
	n := len(h.of("good"))
	h.waitFires("good", 10*time.Second, atLeast(n+2))
	for id := range want {
		if f := h.of(id); len(f) != 0 {
			t.Errorf("invalid schedule %s fired %d times", id, len(f))
		}
	}
}
