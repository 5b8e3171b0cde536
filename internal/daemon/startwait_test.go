package daemon

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testlog"
)

// TestStartWaitsAreBoundedAndLogged: a server that never answers the
// scheduler's requests to read the leases bucket (its user may not create
// consumers there: the requests go unanswered until they time out) does
// not hold the start: it completes, and says at info what it waited for
// and that the wait ended.
func TestStartWaitsAreBoundedAndLogged(t *testing.T) {
	withhold := []string{"$JS.API.CONSUMER.CREATE.KV_sched_leases", "$JS.API.CONSUMER.CREATE.KV_sched_leases.>"}
	srv := natstest.StartWith(t, &server.Options{Users: []*server.User{{Username: "sched", Password: "pw",
		Permissions: &server.Permissions{Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: withhold}}}}})
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := Start(context.Background(), Config{Conn: natsconn.Options{URL: srv.URL(), User: "sched", Password: "pw"}, Logger: log})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs.String())
	}
	defer func() { _ = d.Stop(context.Background()) }()
	out := logs.String()
	logged := func(parts ...string) bool {
	lines:
		for l := range strings.Lines(out) {
			for _, p := range parts {
				if !strings.Contains(l, p) {
					continue lines
				}
			}
			return true
		}
		return false
	}
	what := `for="the fleet's member records (leases bucket)"`
	for _, want := range [][]string{
		{`level=INFO msg="start: waiting"`, what, "waited="},
		{`level=INFO msg="start: waited"`, what, "took="},
		{`msg="scheduler started"`},
	} {
		if !logged(want...) {
			t.Errorf("the log lacks a line with %q:\n%s", want, out)
		}
	}
}
