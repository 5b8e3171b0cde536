package eventfilter

import (
	"strconv"
	"strings"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// SubjectID is the last token of the event's subject: the schedule id,
// else the key with its dots as dashes for a lease_ignored event
// ("shard-5", "member-b"), else "shard-<n>" for a lease event, else the
// instance.
func SubjectID(ev kvstore.Event) string {
	switch {
	case ev.Schedule != "":
		return ev.Schedule
	case ev.Key != "":
		return strings.ReplaceAll(ev.Key, ".", "-")
	case ev.Shard != nil:
		return "shard-" + strconv.Itoa(*ev.Shard)
	}
	return ev.Instance
}
