package kvstore_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestEventDocs: docs/fire-messages.md gives the JSON of every kind a
// scheduler publishes, and each example is exactly what kvstore.Event
// encodes (no unknown field, fields in the order they are written).
func TestEventDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/fire-messages.md")
	if err != nil {
		t.Fatal(err)
	}
	_, events, ok := strings.Cut(string(doc), "\n## Events\n")
	if !ok {
		t.Fatal("no Events section")
	}
	seen := map[kvstore.EventKind]bool{}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(events, -1) {
		dec := json.NewDecoder(strings.NewReader(m[1]))
		dec.DisallowUnknownFields()
		var ev kvstore.Event
		if err := dec.Decode(&ev); err != nil {
			t.Errorf("example %s: %v", m[1], err)
			continue
		}
		again, _ := json.Marshal(ev)
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(m[1]))
		if !bytes.Equal(again, compact.Bytes()) {
			t.Errorf("example %s\nencodes as %s", m[1], again)
		}
		if ev.Kind == kvstore.EventFired && (ev.SlotID != kvstore.SlotID(ev.Schedule, ev.Slot) || !ev.ScheduledAt.Equal(ev.Slot)) {
			t.Errorf("the fired example's slot_id or scheduled_at does not match its slot: %s", m[1])
		}
		seen[ev.Kind] = true
	}
	for _, k := range eventfilter.SchedulerEvents() {
		if !seen[k] {
			t.Errorf("docs/fire-messages.md has no JSON example of %s", k)
		}
	}
}
