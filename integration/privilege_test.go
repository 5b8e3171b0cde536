package integration

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/daemon/daemontest"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

const testAuditKey = "a-secret-of-at-least-16-bytes"

// TestLeastPrivilege runs natsconf/single.conf's accounts (plus a second
// worker, payroll, printed by the same generator as the template's
// billing worker): the scheduler works with its permissions, each worker
// consumes and reports on its own workflow, and every attempt of issue 12
// (item 2) and issue 14 (item 5) to step outside a role is refused, each
// logged as "refused: ...". The operator is in its own account (OPS) and
// reaches only what it imports.
func TestLeastPrivilege(t *testing.T) {
	url := startNatsconfServer(t, extraWorker(t, "payroll", "payroll-secret"))
	ctx := context.Background()

	// The scheduler's refusal of a forged report is a typed engine step;
	// an asynchronous error on its connection shows only in its log.
	natsErr := testlog.NewSignal("NATS error")
	refusedReport := make(chan struct{}, 1)
	d, err := daemon.Start(ctx, daemon.Config{
		Conn:     natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"},
		AuditKey: []byte(testAuditKey), Logger: natsErr.Logger(),
		Fire: fires.Config{StepHook: func(s fires.Step) {
			if s == fires.StepReportRefused {
				select {
				case refusedReport <- struct{}{}:
				default:
				}
			}
		}},
	})
	if err != nil {
		t.Fatalf("the scheduler cannot run with its permissions: %v", err)
	}
	defer daemontest.Stop(t, d)

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
	// The billing worker completes a fire only once its ledger tick is
	// written: a report that arrives before the tick is lost to the ledger
	// (the fire engine's known race), and this test is about permissions.
	tickWritten := func(slot string) bool { _, err := d.Store().SlotEntry(ctx, slot); return err == nil }
	invFires, _ := startWorker(t, billing.nc, "billing", "invoices", tickWritten)
	payFires, _ := startWorker(t, payroll.nc, "payroll", "payroll", nil)
	invSlot, paySlot := nextFire(t, invFires), nextFire(t, payFires)
	pjs, _ := jetstream.New(payroll.nc)
	wakeups, err := worker.New(worker.Config{JetStream: pjs, Name: "payroll"})
	if err != nil {
		t.Fatal(err)
	}
	_ = wakeups.HandleWakeup("payroll", func(context.Context, worker.Wakeup) error { return nil })
	if err := wakeups.Start(ctx); err != nil {
		t.Fatalf("a worker with --wakeups cannot create its wakeup consumer: %v", err)
	}
	defer func() { _ = wakeups.StopAndCancel(context.Background()) }()
	testwait.Eventually(t, 15*time.Second, "the completion report of inv accepted", func() bool { // the report on sched.done.invoices.inv was accepted
		tick, err := d.Store().SlotEntry(ctx, invSlot)
		return err == nil && tick.Status == kvstore.TickCompleted
	})

	sched := connectAs(t, url, "scheduler", "scheduler-secret")
	sjs, _ := jetstream.New(sched.nc)
	if err := auditlog.Setup(ctx, sjs, audit.Trail{}, 1); err != nil {
		t.Fatalf("the scheduler may create and update SCHED_AUDIT, yet: %v", err)
	}
	forged, _ := json.Marshal(kvstore.DoneReport{SlotID: paySlot, Outcome: kvstore.OutcomeFailed, Error: "forged", Worker: "billing"})
	own := "billing-fire-invoices"
	refusals := []struct {
		who           *actor
		name, subject string
		body          []byte
	}{
		// A worker reaches for another workflow's fires...
		{billing, "worker creates a durable with filter sched.fire.> via DURABLE.CREATE",
			"$JS.API.CONSUMER.DURABLE.CREATE.SCHED_FIRES." + own, consumerCreate(own, "sched.fire.>")},
		{billing, "worker creates its own-named consumer with another workflow's filter (CREATE subject form)",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own + ".sched.fire.payroll", consumerCreate(own, "sched.fire.payroll")},
		{billing, "worker creates its own-named consumer on another workflow's per-schedule subjects (CREATE subject form)",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own + ".sched.fire.payroll.>", consumerCreate(own, "sched.fire.payroll.>")},
		{billing, "worker creates its legacy-named consumer with another workflow's filter",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own + "-legacy.sched.fire.payroll", consumerCreate(own+"-legacy", "sched.fire.payroll")},
		{billing, "worker creates its own-named consumer with a wildcard filter sched.fire.> (CREATE subject form)",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own + ".sched.fire.>", consumerCreate(own, "sched.fire.>")},
		{billing, "worker creates its own-named consumer with a wildcard filter sched.fire.* (CREATE subject form)",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own + ".sched.fire.*", consumerCreate(own, "sched.fire.*")},
		{billing, "worker creates its own-named consumer without a filter in the subject",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES." + own, consumerCreate(own, "sched.fire.>")},
		{billing, "worker creates an unnamed (legacy ephemeral) consumer on SCHED_FIRES",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES", consumerCreate("", "sched.fire.>")},
		{billing, "worker creates a consumer under another worker's name",
			"$JS.API.CONSUMER.CREATE.SCHED_FIRES.payroll-fire-payroll.sched.fire.payroll", consumerCreate("payroll-fire-payroll", "sched.fire.payroll")},
		{billing, "worker pulls (CONSUMER.MSG.NEXT) from another worker's consumer",
			"$JS.API.CONSUMER.MSG.NEXT.SCHED_FIRES.payroll-fire-payroll", []byte(`{"batch":1,"expires":1000000000}`)},
		{billing, "worker reads another worker's consumer info", "$JS.API.CONSUMER.INFO.SCHED_FIRES.payroll-fire-payroll", nil},
		{billing, "worker deletes another worker's consumer", "$JS.API.CONSUMER.DELETE.SCHED_FIRES.payroll-fire-payroll", nil},
		{billing, "worker reads a fire by sequence (STREAM.MSG.GET)", "$JS.API.STREAM.MSG.GET.SCHED_FIRES", []byte(`{"seq":1}`)},
		{billing, "worker reads the last payroll fire directly (DIRECT.GET)", "$JS.API.DIRECT.GET.SCHED_FIRES.sched.fire.payroll", nil},
		// ...forges reports on another workflow's slots...
		{billing, "worker publishes sched.done.payroll.pay (another workflow's completion report)", "sched.done.payroll.pay", forged},
		{billing, "worker publishes sched.event.dead_letter.payroll.pay (another workflow's dead letter)", "sched.event.dead_letter.payroll.pay", []byte(`{}`)},
		{billing, "worker publishes a forged report on the old form sched.done.pay", "sched.done.pay", forged},
		{billing, "worker publishes a dead letter on the old form sched.event.dead_letter.pay", "sched.event.dead_letter.pay", []byte(`{}`)},
		// ...and writes what only the scheduler or the operator may.
		{billing, "worker writes a spec into the bucket", "$KV.sched_specs.sneaky", []byte(`{"workflow":"x","every":"1s"}`)},
		{billing, "worker publishes a fire", "sched.fire.invoices", []byte(`{}`)},
		{billing, "worker calls the admin API", "sched.api.schedule.delete", []byte(`{"id":"pay"}`)},
		// The scheduler may not erase the audit trail, nor delete what it keeps.
		{sched, "scheduler deletes SCHED_AUDIT", "$JS.API.STREAM.DELETE.SCHED_AUDIT", nil},
		{sched, "scheduler purges SCHED_AUDIT", "$JS.API.STREAM.PURGE.SCHED_AUDIT", nil},
		{sched, "scheduler deletes an entry of SCHED_AUDIT", "$JS.API.STREAM.MSG.DELETE.SCHED_AUDIT", []byte(`{"seq":1}`)},
		{sched, "scheduler deletes SCHED_FIRES", "$JS.API.STREAM.DELETE.SCHED_FIRES", nil},
		{sched, "scheduler deletes the specs bucket", "$JS.API.STREAM.DELETE.KV_sched_specs", nil},
		{sched, "scheduler purges the ledger", "$JS.API.STREAM.PURGE.KV_sched_ticks", nil},
		{sched, "scheduler updates the audit head bucket (lowering its history)", "$JS.API.STREAM.UPDATE.KV_sched_audit_head", []byte(`{"name":"KV_sched_audit_head"}`)},
		{sched, "scheduler deletes the audit head bucket", "$JS.API.STREAM.DELETE.KV_sched_audit_head", nil},
		{sched, "scheduler creates a stream outside its layout", "$JS.API.STREAM.CREATE.OTHER", []byte(`{"name":"OTHER","subjects":["other.>"]}`)},
		// The operator goes through the API only.
		{op, "operator writes a spec into the bucket", "$KV.sched_specs.sneaky", []byte(`{"workflow":"x","every":"1s"}`)},
		{op, "operator deletes SCHED_AUDIT", "$JS.API.STREAM.DELETE.SCHED_AUDIT", nil},
		{op, "operator publishes a fire", "sched.fire.invoices", []byte(`{}`)},
		{op, "operator reads the trail through the scheduler account's API subject, not its import", "$JS.API.STREAM.INFO.SCHED_AUDIT", nil},
	}
	for _, r := range refusals {
		r.who.refusePublish(t, r.name, r.subject, r.body)
	}
	for _, r := range []struct{ name, subject string }{
		{"worker subscribes to every inbox _INBOX.> (other users' pulled messages and replies)", "_INBOX.>"},
		{"worker subscribes to the payroll worker's inbox", natsperm.InboxPrefix("payroll-worker") + ".>"},
		{"worker subscribes to the fires as published (sched.fire.>)", "sched.fire.>"},
		{"worker subscribes to another workflow's cancel requests", "sched.cancel.payroll.>"},
	} {
		billing.refuseSubscribe(t, r.name, r.subject)
	}
	// The subject form the worker may use still cannot widen its filter:
	// JetStream checks the body against the subject.
	billing.refuseByServer(t, "worker's permitted create subject with sched.fire.> in the body (server: filter mismatch)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES."+own+".sched.fire.invoices.>", consumerCreate(own, "sched.fire.>"), 10131)
	billing.refuseByServer(t, "worker's permitted create subject with filter_subjects [sched.fire.payroll] in the body (server: multiple filters not allowed)",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES."+own+".sched.fire.invoices.>",
		[]byte(`{"stream_name":"SCHED_FIRES","config":{"durable_name":"`+own+`","filter_subjects":["sched.fire.payroll"],"ack_policy":"explicit"}}`), 10137)
	// A report on the worker's own workflow's subject about payroll's
	// slot passes the permissions; the scheduler refuses it.
	billing.publish(t, "sched.done.invoices.pay", forged)
	testwait.Done(t, 10*time.Second, "the scheduler's refusal of a report on sched.done.invoices.pay about payroll's slot", refusedReport)
	t.Logf("refused (by the scheduler): worker publishes sched.done.invoices.pay, its own workflow's subject, about payroll's slot")
	if tick, err := d.Store().SlotEntry(ctx, paySlot); err != nil || tick.Status == kvstore.TickFailed {
		t.Fatalf("payroll's tick after forged reports: %+v %v", tick, err)
	}

	deadLettersUnderLeastPrivilege(t, op, billing, sched)

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
	if !opts.NoSublistCache {
		t.Error("natsconf/single.conf leaves the shared match cache on (disable_sublist_cache, docs/operations.md)")
	}
	opts.Port, opts.HTTPPort, opts.StoreDir, opts.NoSigs, opts.NoLog = -1, 0, t.TempDir(), true, true
	// The extra users join the scheduler's account (JETSCHED). The parsed
	// users come in no fixed order: the first may be the operator's (OPS,
	// without JetStream).
	var account *server.Account
	for _, u := range opts.Users {
		if u.Username == "scheduler" {
			account = u.Account
		}
	}
	if account == nil {
		t.Fatal("natsconf/single.conf has no scheduler user")
	}
	for _, u := range extra {
		opts.Users = append(opts.Users, &server.User{
			Username: u.Name, Password: u.Password, Account: account,
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

// extraWorker is a worker "<name>" for the fires and wakeups of workflow
// "<name>", as `scheduler natsconf --wakeups` prints it.
func extraWorker(t *testing.T, name, password string) natsperm.User {
	t.Helper()
	u, err := natsperm.WorkerUser(natsperm.Worker{Name: name, Workflows: []string{name}, Wakeups: true,
		Credential: natsperm.Credential{Password: password}})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// startWorker runs a pkg/worker handling workflow on nc (until the test
// ends) and returns the slot ids of the fires it handled, and the worker.
// With ready, a fire is retried until ready says yes.
func startWorker(t *testing.T, nc *nats.Conn, name, workflow string, ready func(slot string) bool) (chan string, *worker.Worker) {
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
		if ready != nil && !ready(f.SlotID) {
			return worker.Retry(errors.New("not ready"), 100*time.Millisecond)
		}
		select {
		case got <- f.SlotID:
		default:
		}
		return nil
	})
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("worker %s cannot create its consumer with its permissions: %v", name, err)
	}
	t.Cleanup(func() { _ = w.StopAndCancel(context.Background()) })
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
