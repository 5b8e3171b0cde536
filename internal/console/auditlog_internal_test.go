package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestAuditFollowerReadsLargeEntries: the console follows a trail whose
// entries carry specs at the input size limit (a schedule.put's detail is
// the spec it wrote) over a link slower than the server without its
// connection being closed as a slow consumer: it pulls them a byte limit
// at a time. Pulled 500 at a time by count, 64 such entries (16 MiB,
// twice the test server's limit of pending bytes) were on their way at
// once.
func TestAuditFollowerReadsLargeEntries(t *testing.T) {
	t.Parallel()
	srv := natstest.StartTight(t)
	ctx := context.Background()
	_, js := srv.Connect(t)
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	trail := auditlog.New(js, []byte("console-internal-test-key-0123456789"), "scheduler:t")
	const n = 64
	detail, err := json.Marshal(map[string]string{"input": strings.Repeat("x", kvstore.MaxInputBytes-32)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		e := audit.Entry{Kind: audit.KindAction, Actor: "alice", Action: "schedule.put", Target: fmt.Sprintf("s%02d", i), Detail: detail}
		if _, err := trail.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	nc, sjs := natstest.Dial(t, natstest.SlowLink(t, srv.URL(), 8<<10)) // 8 KiB per millisecond at most
	a := newAuditFollower(sjs, 1000, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.start(ctx)
	defer a.Stop()
	testwait.Eventually(t, time.Minute, "the console to have read every entry", func() bool {
		c, _ := a.changes("schedule", fmt.Sprintf("s%02d", n-1))
		return c.Spec != nil
	})
	srv.KeptUp(t, nc, "the console")
}
