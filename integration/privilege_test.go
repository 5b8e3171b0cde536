package integration

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

const testAuditKey = "a-secret-of-at-least-16-bytes"

// TestLeastPrivilege runs natsconf/single.conf's accounts (plus a second
// worker, payroll, printed by the same generator as the template's
// billing worker): the scheduler works with its permissions, each worker
// consumes and reports on its own workflow, and every attempt of issue 12
// (item 2) and issue 14 (item 5) to step outside a role is refused, each
// logged as "refused: ...".
func TestLeastPrivilege(t *testing.T) {
	url := startNatsconfServer(t, extraWorker(t, "payroll", "payroll-secret"))
	ctx := context.Background()

	refusedReport, natsErr := testlog.NewSignal("completion report refused"), testlog.NewSignal("NATS error")
	d, err := daemon.Start(ctx, daemon.Config{
		Conn:     natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
		AuditKey: []byte(testAuditKey), Logger: slog.New(slog.NewMultiHandler(refusedReport, natsErr)),
	})
	if err != nil {
		t.Fatalf("the scheduler cannot run with its permissions: %v", err)
	}
	defer d.Stop()

	// The operator creates two schedules through the admin API.
	op := connectAs(t, url, "operator", "operator-secret")
	for id, wf := range map[string]string{"inv": "invoices", "pay": "payroll"} {
		req, _ := json.Marshal(map[string]any{"id": id, "spec": map[string]any{"workflow": wf, "every": "1s"}})
		msg, err := op.nc.Request("sched.api.schedule.create", req, 10*time.Second)
		if err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
			t.Fatalf("operator create %s through the API: %v %s", id, err, msg.Data)
		}
	}

	// Each worker consumes its own workflow's fires and reports on them.
	billing := connectAs(t, url, "billing-worker", "worker-secret")
	payroll := connectAs(t, url, "payroll-worker", "payroll-secret")
	invFires, _ := startWorker(t, billing.nc, "billing", "invoices")
	payFires, _ := startWorker(t, payroll.nc, "payroll", "payroll")
	invSlot, paySlot := nextFire(t, invFires), nextFire(t, payFires)
	waitUntil(t, 15*time.Second, func() bool { // the report on sched.done.invoices.inv was accepted
		tick, err := d.Store().GetTick(ctx, invSlot)
		return err == nil && tick.Status == kvstore.TickCompleted
	})

	// A worker reaches for another workflow's fires.
	billing.refusePublish(t, "worker creates a durable with filter sched.fire.> via DURABLE.CREATE",
		"$JS.API.CONSUMER.DURABLE.CREATE.SCHED_FIRES.billing-fire-invoices",
		consumerCreate("billing-fire-invoices", "sched.fire.>"))
	billing.refusePublish(t, "worker creates its own-named consumer with another workflow's filter (CREATE subject form)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices.sched.fire.payroll",
		consumerCreate("billing-fire-invoices", "sched.fire.payroll"))
	billing.refusePublish(t, "worker creates its own-named consumer with a wildcard filter sched.fire.> (CREATE subject form)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices.sched.fire.>",
		consumerCreate("billing-fire-invoices", "sched.fire.>"))
	billing.refusePublish(t, "worker creates its own-named consumer with a wildcard filter sched.fire.* (CREATE subject form)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices.sched.fire.*",
		consumerCreate("billing-fire-invoices", "sched.fire.*"))
	billing.refusePublish(t, "worker creates its own-named consumer without a filter in the subject",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices",
		consumerCreate("billing-fire-invoices", "sched.fire.>"))
	billing.refusePublish(t, "worker creates an unnamed (legacy ephemeral) consumer on SCHED_FIRES",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES", consumerCreate("", "sched.fire.>"))
	billing.refusePublish(t, "worker creates a consumer under another worker's name",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.payroll-fire-payroll.sched.fire.payroll",
		consumerCreate("payroll-fire-payroll", "sched.fire.payroll"))
	billing.refuseByServer(t, "worker's permitted create subject with sched.fire.> in the body (server: filter mismatch)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices.sched.fire.invoices",
		consumerCreate("billing-fire-invoices", "sched.fire.>"), 10131)
	billing.refuseByServer(t, "worker's permitted create subject with filter_subjects [sched.fire.payroll] in the body (server: multiple filters not allowed)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-invoices.sched.fire.invoices",
		[]byte(`{"stream_name":"SCHED_FIRES","config":{"durable_name":"billing-fire-invoices","filter_subjects":["sched.fire.payroll"],"ack_policy":"explicit"}}`), 10137)
	billing.refusePublish(t, "worker pulls (CONSUMER.MSG.NEXT) from another worker's consumer",
		"$JS.API.CONSUMER.MSG.NEXT.SCHED_FIRES.payroll-fire-payroll", []byte(`{"batch":1,"expires":1000000000}`))
	billing.refusePublish(t, "worker reads another worker's consumer info",
		"$JS.API.CONSUMER.INFO.SCHED_FIRES.payroll-fire-payroll", nil)
	billing.refusePublish(t, "worker deletes another worker's consumer",
		"$JS.API.CONSUMER.DELETE.SCHED_FIRES.payroll-fire-payroll", nil)
	billing.refusePublish(t, "worker reads a fire by sequence (STREAM.MSG.GET)",
		"$JS.API.STREAM.MSG.GET.SCHED_FIRES", []byte(`{"seq":1}`))
	billing.refusePublish(t, "worker reads the last payroll fire directly (DIRECT.GET)",
		"$JS.API.DIRECT.GET.SCHED_FIRES.sched.fire.payroll", nil)
	billing.refuseSubscribe(t, "worker subscribes to every inbox _INBOX.> (other users' pulled messages and replies)", "_INBOX.>")
	billing.refuseSubscribe(t, "worker subscribes to the payroll worker's inbox", natsperm.InboxPrefix("payroll-worker")+".>")
	billing.refuseSubscribe(t, "worker subscribes to the fires as published (sched.fire.>)", "sched.fire.>")
	billing.refuseSubscribe(t, "worker subscribes to another workflow's cancel requests", "sched.cancel.payroll.>")

	// A worker forges reports on another workflow's slots.
	forged, _ := json.Marshal(fire.DoneReport{SlotID: paySlot, Outcome: fire.OutcomeFailed, Error: "forged", Worker: "billing"})
	billing.refusePublish(t, "worker publishes sched.done.payroll.pay (another workflow's completion report)", "sched.done.payroll.pay", forged)
	billing.refusePublish(t, "worker publishes sched.event.dead_letter.payroll.pay (another workflow's dead letter)",
		"sched.event.dead_letter.payroll.pay", []byte(`{}`))
	billing.refusePublish(t, "worker publishes a forged report on the old form sched.done.pay", "sched.done.pay", forged)
	billing.refusePublish(t, "worker publishes a dead letter on the old form sched.event.dead_letter.pay",
		"sched.event.dead_letter.pay", []byte(`{}`))
	billing.publish(t, "sched.done.invoices.pay", forged) // permitted subject, but pay is payroll's schedule
	select {
	case <-refusedReport.Seen:
		t.Logf("refused (by the scheduler): worker publishes sched.done.invoices.pay, its own workflow's subject, about payroll's slot")
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler recorded a report on sched.done.invoices.pay for payroll's slot")
	}
	if tick, err := d.Store().GetTick(ctx, paySlot); err != nil || tick.Status == kvstore.TickFailed {
		t.Fatalf("payroll's tick after forged reports: %+v %v", tick, err)
	}

	// A worker writes what only the scheduler or the operator may.
	billing.refusePublish(t, "worker writes a spec into the bucket", "$KV.sched_specs.sneaky", []byte(`{"workflow":"x","every":"1s"}`))
	billing.refusePublish(t, "worker publishes a fire", "sched.fire.invoices", []byte(`{}`))
	billing.refusePublish(t, "worker calls the admin API", "sched.api.schedule.delete", []byte(`{"id":"pay"}`))

	// The scheduler may create and update the audit stream, but not erase it.
	sched := connectAs(t, url, "scheduler", "scheduler-secret")
	sjs, _ := jetstream.New(sched.nc)
	if err := audit.Setup(ctx, sjs, 1); err != nil {
		t.Fatalf("the scheduler cannot update SCHED_AUDIT: %v", err)
	}
	sched.refusePublish(t, "scheduler deletes SCHED_AUDIT", "$JS.API.STREAM.DELETE.SCHED_AUDIT", nil)
	sched.refusePublish(t, "scheduler purges SCHED_AUDIT", "$JS.API.STREAM.PURGE.SCHED_AUDIT", nil)
	sched.refusePublish(t, "scheduler deletes an entry of SCHED_AUDIT", "$JS.API.STREAM.MSG.DELETE.SCHED_AUDIT", []byte(`{"seq":1}`))
	sched.refusePublish(t, "scheduler deletes SCHED_FIRES", "$JS.API.STREAM.DELETE.SCHED_FIRES", nil)
	sched.refusePublish(t, "scheduler deletes the specs bucket", "$JS.API.STREAM.DELETE.KV_sched_specs", nil)
	sched.refusePublish(t, "scheduler purges the ledger", "$JS.API.STREAM.PURGE.KV_sched_ticks", nil)
	sched.refusePublish(t, "scheduler creates a stream outside its layout", "$JS.API.STREAM.CREATE.OTHER", []byte(`{"name":"OTHER","subjects":["other.>"]}`))

	// The operator goes through the API only.
	op.refusePublish(t, "operator writes a spec into the bucket", "$KV.sched_specs.sneaky", []byte(`{"workflow":"x","every":"1s"}`))
	op.refusePublish(t, "operator deletes SCHED_AUDIT", "$JS.API.STREAM.DELETE.SCHED_AUDIT", nil)
	op.refusePublish(t, "operator publishes a fire", "sched.fire.invoices", []byte(`{}`))

	// After all that, both workflows still fire, and the scheduler's own
	// connection was never refused anything.
	nextFire(t, invFires)
	nextFire(t, payFires)
	select {
	case <-natsErr.Seen:
		t.Fatal("the scheduler's connection got an asynchronous error (a permissions violation?): see its log")
	default:
	}
}

// startNatsconfServer runs natsconf/single.conf (free ports, a temporary
// store, no monitoring port) with extra users in its account.
func startNatsconfServer(t *testing.T, extra ...natsperm.User) string {
	t.Helper()
	opts, err := server.ProcessConfigFile(filepath.Join("..", "natsconf", "single.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Port, opts.HTTPPort, opts.StoreDir, opts.NoSigs, opts.NoLog = -1, 0, t.TempDir(), true, true
	for _, u := range extra {
		opts.Users = append(opts.Users, &server.User{
			Username: u.Name, Password: u.Password, Account: opts.Users[0].Account,
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: u.PublishAllow.Subjects(), Deny: u.PublishDeny.Subjects()},
				Subscribe: &server.SubjectPermission{Allow: u.SubscribeAllow.Subjects()},
			},
		})
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return srv.ClientURL()
}

// extraWorker is a worker "<name>" for workflow "<name>", as `scheduler
// natsconf` prints it.
func extraWorker(t *testing.T, name, password string) natsperm.User {
	t.Helper()
	u, err := natsperm.WorkerUser(natsperm.Worker{Name: name, Workflows: []string{name}, Credential: natsperm.Credential{Password: password}})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// startWorker runs a pkg/worker handling workflow on nc (until the test
// ends) and returns the slot ids of the fires it handled, and the worker.
func startWorker(t *testing.T, nc *nats.Conn, name, workflow string) (chan string, *worker.Worker) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Config{JetStream: js, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 64)
	_ = w.Handle(workflow, func(_ context.Context, f worker.Fire) error {
		select {
		case got <- f.SlotID:
		default:
		}
		return nil
	})
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("worker %s cannot create its consumer with its permissions: %v", name, err)
	}
	t.Cleanup(w.Stop)
	return got, w
}

func nextFire(t *testing.T, fires chan string) string {
	t.Helper()
	select {
	case id := <-fires:
		return id
	case <-time.After(15 * time.Second):
		t.Fatal("the worker received no fire")
	}
	return ""
}

func consumerCreate(name, filter string) []byte {
	cfg := map[string]any{"filter_subject": filter, "ack_policy": "explicit", "deliver_policy": "all"}
	if name != "" {
		cfg["durable_name"] = name
	}
	b, _ := json.Marshal(map[string]any{"stream_name": "SCHED_FIRES", "config": cfg})
	return b
}

// actor is a connection as one of the users, with the asynchronous
// errors the server sends it (permission violations).
type actor struct {
	user string
	nc   *nats.Conn
	errs chan error
}

// connectAs connects as user; a worker user connects with its own inbox
// prefix, the only replies it may read.
func connectAs(t *testing.T, url, user, pass string) *actor {
	t.Helper()
	a := &actor{user: user, errs: make(chan error, 64)}
	opts := []nats.Option{nats.UserInfo(user, pass), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case a.errs <- err:
		default:
		}
	})}
	if strings.HasSuffix(user, "-worker") {
		opts = append(opts, nats.CustomInboxPrefix(natsperm.InboxPrefix(user)))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	a.nc = nc
	return a
}

func (a *actor) publish(t *testing.T, subject string, data []byte) {
	t.Helper()
	if err := a.nc.PublishRequest(subject, a.nc.NewRespInbox(), data); err != nil {
		t.Fatal(err)
	}
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// refusePublish publishes a request on subject and expects the server's
// permission violation for it.
func (a *actor) refusePublish(t *testing.T, name, subject string, data []byte) {
	t.Helper()
	a.publish(t, subject, data)
	a.expectViolation(t, name, "publish to \""+subject+"\"")
}

// refuseSubscribe subscribes to subject and expects the server's
// permission violation for it.
func (a *actor) refuseSubscribe(t *testing.T, name, subject string) {
	t.Helper()
	sub, err := a.nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = a.nc.Flush()
	a.expectViolation(t, name, "subscription to \""+subject+"\"")
}

func (a *actor) expectViolation(t *testing.T, name, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-a.errs:
			if errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(what)) {
					t.Logf("refused: %s (%s)", name, err)
					return
				}
			}
		case <-deadline:
			t.Fatalf("%s: %s was not refused", name, what)
		}
	}
}

// refuseByServer sends a request the permissions let through and expects
// JetStream's error code for it.
func (a *actor) refuseByServer(t *testing.T, name, subject string, data []byte, code int) {
	t.Helper()
	msg, err := a.nc.Request(subject, data, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil || resp.Error == nil || int(resp.Error.ErrorCode) != code {
		t.Fatalf("%s: reply %s, want error code %d", name, msg.Data, code)
	}
	t.Logf("refused: %s (%s)", name, resp.Error.Description)
}
