package integration

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/worker"
)

// TestLeastPrivilege runs natsconf/single.conf's accounts: the scheduler
// works with its own permissions, the operator operates through the admin
// API only, and a worker consumes its fires but can neither write specs nor
// publish fires.
func TestLeastPrivilege(t *testing.T) {
	opts, err := server.ProcessConfigFile(filepath.Join("..", "natsconf", "single.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Port, opts.HTTPPort, opts.StoreDir, opts.NoSigs, opts.NoLog = -1, 0, t.TempDir(), true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	url := srv.ClientURL()
	ctx := context.Background()

	d, err := daemon.Start(ctx, daemon.Config{Conn: natsconn.Options{URL: url, User: "scheduler", Password: "scheduler-secret"}})
	if err != nil {
		t.Fatalf("the scheduler cannot run with its permissions: %v", err)
	}
	defer d.Stop()

	// The operator creates a schedule through the admin API...
	op, opErrs := connectAs(t, url, "operator", "operator-secret")
	req, _ := json.Marshal(map[string]any{"id": "inv", "spec": map[string]any{"workflow": "invoices", "every": "1s"}})
	msg, err := op.Request("sched.api.schedule.create", req, 10*time.Second)
	if err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("operator create through the API: %v %s", err, msg.Data)
	}
	// ...but cannot write the bucket directly.
	expectDenied(t, op, opErrs, "$KV.sched_specs.sneaky")

	// The worker consumes its fires and reports completion...
	wnc, wErrs := connectAs(t, url, "billing-worker", "worker-secret")
	wjs, _ := jetstream.New(wnc)
	got := make(chan string, 4)
	w, err := worker.New(worker.Config{JetStream: wjs, Name: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Handle("invoices", func(_ context.Context, f worker.Fire) error { got <- f.SlotID; return nil })
	if err := w.Start(ctx); err != nil {
		t.Fatalf("worker cannot create its consumer: %v", err)
	}
	defer w.Stop()
	select {
	case <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("the worker received no fire")
	}
	// ...but cannot write specs, publish fires, or reach other consumers.
	expectDenied(t, wnc, wErrs, "$KV.sched_specs.sneaky")
	expectDenied(t, wnc, wErrs, "sched.fire.invoices")
	expectDenied(t, wnc, wErrs, "$JS.API.CONSUMER.CREATE.SCHED_FIRES.other-fire-invoices.sched.fire.invoices")
}

func connectAs(t *testing.T, url, user, pass string) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 16)
	nc, err := nats.Connect(url, nats.UserInfo(user, pass), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

// expectDenied publishes on subject and expects the server's permission
// violation.
func expectDenied(t *testing.T, nc *nats.Conn, errs chan error, subject string) {
	t.Helper()
	if err := nc.Publish(subject, []byte(`{"workflow":"x","every":"1s"}`)); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(err.Error(), "Permissions Violation") {
			t.Fatalf("publish on %s: %v, want a permissions violation", subject, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("publish on %s was not refused", subject)
	}
}
