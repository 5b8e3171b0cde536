package wakeup_test

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/pkg/wakeup"
)

// ParseMeta reads the headers a scheduler puts on a wakeup message (a
// pkg/worker handler gets them parsed, as Wakeup.Meta).
func ExampleParseMeta() {
	h := nats.Header{}
	h.Set("Nats-Msg-Id", "wakeup.order-42.escalate.1796227200000")
	h.Set("Sched-Run", "order-42")
	h.Set("Sched-Step", "escalate")
	h.Set("Sched-Workflow", "approvals")
	h.Set("Sched-Due-At", "2026-12-02T11:00:00-05:00")
	h.Set("Sched-When", "48 whours")
	h.Set("Sched-Condition", "awaiting_approval")
	h.Set("Sched-Rearms", "1")
	m, err := wakeup.ParseMeta(h)
	fmt.Println(m.Run, m.Step, m.Workflow, m.When, m.Condition, m.Rearms, m.DueAt.UTC(), err)

	_, err = wakeup.ParseMeta(nats.Header{"Sched-Schedule-Id": {"daily-report"}}) // a fire's headers
	fmt.Println(err)
	// Output:
	// order-42 escalate approvals 48 whours awaiting_approval 1 2026-12-02 16:00:00 +0000 UTC <nil>
	// wakeup: not a wakeup message: missing Nats-Msg-Id, Sched-Run or Sched-Step
}
