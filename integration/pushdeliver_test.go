package integration

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/jetsched/jetsched/internal/daemon/daemontest"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWorkerPushIntoTheAPIIsIgnored: a worker with natsconf's accounts may
// create its consumer as a push consumer whose deliver subject is an admin
// API endpoint: nats-server checks neither the creator's permissions on a
// deliver subject nor push against pull, and the create subject names only
// the stream, the consumer and the filter (nats-server#8274), so no
// permission refuses it. With micro's queue group as its deliver group,
// the server then delivers the worker's fires into
// sched.api.schedule.delete, each with a JetStream ack subject as its
// reply. The admin API acts only on requests (a reply that is not a
// JetStream subject): here the fire's input, a valid delete request of
// another workflow's schedule, is refused with a warning, and that
// schedule stays. The ordinary worker path keeps working beside it.
func TestWorkerPushIntoTheAPIIsIgnored(t *testing.T) {
	url := startNatsconfServer(t, extraWorker(t, "payroll", "payroll-secret"))
	ctx := context.Background()
	refused := testlog.NewSignal("admin API: refused a message that is no request")
	d, err := daemon.Start(ctx, daemon.Config{
		Conn:   natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
		Logger: refused.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer daemontest.Stop(t, d)

	// payroll's schedule is the victim; invoices' fires carry, as their
	// input, a request to delete it.
	op := connectAs(t, url, "operator", "operator-secret")
	for id, spec := range map[string]map[string]any{
		"victim": {"workflow": "payroll", "every": "1s"},
		"bait":   {"workflow": "invoices", "every": "1s", "input": map[string]any{"id": "victim"}},
	} {
		req, _ := json.Marshal(map[string]any{"id": id, "spec": spec})
		msg, err := op.nc.Request("sched.api.schedule.create", req, 10*time.Second)
		if err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
			t.Fatalf("operator create %s: %v %s", id, err, msg.Data)
		}
	}

	// The billing worker makes its consumer a push consumer into the API.
	billing := connectAs(t, url, "billing-worker", "worker-secret")
	const own = "billing-fire-invoices"
	create, _ := json.Marshal(map[string]any{"stream_name": "SCHED_FIRES", "config": map[string]any{
		"durable_name": own, "filter_subject": "sched.fire.invoices.>", "ack_policy": "explicit",
		"deliver_policy": "all", "deliver_subject": "sched.api.schedule.delete", "deliver_group": "q", // micro's queue group
	}})
	msg, err := billing.nc.Request("$JS.API.CONSUMER.CREATE.SCHED_FIRES."+own+".sched.fire.invoices.>", create, 10*time.Second)
	if err != nil {
		t.Fatalf("push consumer create: %v", err)
	}
	var resp struct {
		Error *struct{ Description string } `json:"error"`
	}
	if json.Unmarshal(msg.Data, &resp) != nil || resp.Error != nil {
		// A server that refuses it closes the hole itself; the API's own
		// check stays as defence in depth.
		t.Logf("the server refused the push consumer: %s", msg.Data)
	} else {
		t.Logf("not refusable by permissions (nats-server#8274): the worker created %s delivering into sched.api.schedule.delete", own)
		testwait.Eventually(t, 30*time.Second, "the admin API's refusal of a fire delivered into sched.api.schedule.delete (or its obeying it)", func() bool {
			select {
			case <-refused.Seen:
				return true
			default:
			}
			_, err := d.Store().GetSpec(ctx, "victim")
			return errors.Is(err, kvstore.ErrNotFound)
		})
	}
	if _, err := d.Store().GetSpec(ctx, "victim"); err != nil {
		t.Fatalf("the schedule the pushed fires asked to delete: %v", err)
	}

	// Everything else the scheduler owns it listens to on wildcards
	// (sched.done.>, sched.cancel.>, the buckets' and streams' subjects),
	// and the server delivers a push consumer's messages only to a
	// subscription on exactly its deliver subject: a consumer aimed at a
	// bucket stays unbound, while the one aimed at the API endpoint is bound.
	info := func(name string) (pushBound bool) {
		msg, err := billing.nc.Request("$JS.API.CONSUMER.INFO.SCHED_FIRES."+name, nil, 10*time.Second)
		if err != nil {
			t.Fatalf("consumer info %s: %v", name, err)
		}
		var ci struct {
			PushBound bool `json:"push_bound"`
		}
		_ = json.Unmarshal(msg.Data, &ci)
		return ci.PushBound
	}
	if resp.Error == nil && !info(own) {
		t.Errorf("%s, delivering into the API endpoint, is not push-bound: the check below proves nothing", own)
	}
	intoKV, _ := json.Marshal(map[string]any{"stream_name": "SCHED_FIRES", "config": map[string]any{
		"durable_name": own + "-legacy", "filter_subject": "sched.fire.invoices", "ack_policy": "explicit",
		"deliver_subject": "$KV.sched_specs.forged",
	}})
	if _, err := billing.nc.Request("$JS.API.CONSUMER.CREATE.SCHED_FIRES."+own+"-legacy.sched.fire.invoices", intoKV, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if info(own + "-legacy") {
		t.Errorf("a push consumer into $KV.sched_specs.forged is bound: the server would write fires into the specs bucket")
	}

	// The ordinary path: a worker pulls its fires.
	payroll := connectAs(t, url, "payroll-worker", "payroll-secret")
	fires, _ := startWorker(t, payroll.nc, "payroll", "payroll", nil)
	nextFire(t, fires)
	if _, err := d.Store().GetSpec(ctx, "victim"); err != nil {
		t.Fatalf("after the worker's fire: %v", err)
	}
}
