package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// accountConf gives the scheduler's account 4 MB of JetStream file
// storage: its buckets and streams take little of it; a FILLER stream in
// the same account takes the rest.
const accountConf = `
accounts {
  SCHED {
    jetstream { max_file: 4MB, max_mem: 1MB }
    users [ { user: sched, password: sched-pw } ]
  }
}
`

// fill publishes to FILLER until the account refuses (10002), and
// returns how many messages went in.
func fill(t *testing.T, js jetstream.JetStream) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FILLER", Subjects: []string{"filler"}}); err != nil {
		t.Fatal(err)
	}
	// Large messages first, then smaller ones into what is left, down to
	// less than a fire message takes.
	n := 0
	for _, size := range []int{32 << 10, 1 << 10, 64, 1} {
		body := make([]byte, size)
		for ; ; n++ {
			_, err := js.Publish(ctx, "filler", body)
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && apiErr.ErrorCode == 10002 {
				break
			}
			if err != nil {
				t.Fatalf("fill the account: %v", err)
			}
		}
	}
	return n
}

// TestAccountLimit: the scheduler's account at its JetStream max_file
// refuses every write, its claims and fires alike (10002 "resource limits
// exceeded for account"). The scheduler says so once (an event, a
// warning, the blocked gauge), retries without recording anything as
// failed, and once room is made (FILLER deleted) resumes; fire_all fires
// every slot held back, each once.
func TestAccountLimit(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "account.conf")
	if err := os.WriteFile(conf, []byte(accountConf), 0o600); err != nil {
		t.Fatal(err)
	}
	base, err := natsembed.LoadConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.StartWith(t, base)
	r := startRig(t, srv.URL(), natsconn.Options{User: "sched", Password: "sched-pw"})
	r.put("acct", kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: kvstore.MisfireFireAll})
	testwait.Eventually(t, 10*time.Second, "the schedule fires", func() bool {
		fired, _, _, _ := r.slots("acct", time.Second)
		return fired >= 2
	})

	nc, err := nats.Connect(srv.URL(), nats.UserInfo("sched", "sched-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	filled := fill(t, js)
	full := time.Now()
	ev := r.waitEvent(kvstore.EventAccountLimit, 15*time.Second)
	if ev.Instance != r.d.Engine().Instance() || ev.Reason == "" {
		t.Errorf("account_limit event %+v: want this instance and the refusal", ev)
	}
	testwait.Eventually(t, 5*time.Second, "jetsched_publish_blocked{reason=account_limit} at 1", func() bool {
		return r.metric("jetsched_publish_blocked", `reason="account_limit"`) == 1
	})
	// Slots come due while the account is full (not a sleep before an
	// assertion: the fires of these slots are awaited below).
	testwait.Eventually(t, 10*time.Second, "three slots due while full", func() bool { return time.Since(full) > 3*time.Second })

	if err := js.DeleteStream(context.Background(), "FILLER"); err != nil {
		t.Fatal(err)
	}
	r.recovered("account-limit", "acct", kvstore.EventAccountLimit, time.Now(), fmt.Sprintf("filler=%d held=%s",
		filled, time.Since(full).Round(100*time.Millisecond)))
}
