// Package natstest starts real embedded nats-servers for tests. Nothing here
// mocks NATS: every helper runs the same nats-server the daemon embeds.
package natstest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Server is an embedded JetStream server whose store survives Restart.
type Server struct {
	t        testing.TB
	storeDir string
	port     int
	srv      *natsembed.Server
	base     *server.Options
}

// Start runs a single JetStream server on a random loopback port with its
// store in a temporary directory. It is shut down when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, storeDir: t.TempDir()}
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

// StartWith is Start with server options set on top of a bare server's
// (a small max_payload, say).
func StartWith(t testing.TB, base *server.Options) *Server {
	t.Helper()
	s := &Server{t: t, storeDir: t.TempDir(), base: base}
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

// StartIn is Start with the store in dir (a small file system a test
// fills, say) instead of a temporary directory.
func StartIn(t testing.TB, dir string) *Server {
	t.Helper()
	s := &Server{t: t, storeDir: dir}
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	var base *server.Options
	if s.base != nil {
		o := *s.base
		base = &o
	}
	srv, err := natsembed.Start(context.Background(), natsembed.Config{StoreDir: s.storeDir, Port: s.port, Base: base})
	if err != nil {
		s.t.Fatalf("start nats-server: %v", err)
	}
	s.srv = srv
	// Keep the port, so that a restarted server comes back where clients
	// reconnect to.
	if a, ok := srv.Server().Addr().(*net.TCPAddr); ok {
		s.port = a.Port
	}
}

// URL is the client URL of the server.
func (s *Server) URL() string { return s.srv.ClientURL() }

// SlowConsumers counts the client connections the server has found too
// slow to take what it sends them (and closed: past max_pending).
func (s *Server) SlowConsumers() int64 { return s.srv.Server().NumSlowConsumers() }

// StoreDir is the server's JetStream store directory.
func (s *Server) StoreDir() string { return s.storeDir }

// Shutdown stops the server. It is safe to call more than once.
func (s *Server) Shutdown() { s.srv.Shutdown() }

// Restart stops the server and starts it again on the same port and store.
func (s *Server) Restart() {
	s.t.Helper()
	s.srv.Shutdown()
	s.start()
}

// Connect opens a connection that reconnects forever (servers in tests are
// restarted on purpose) and is closed when the test ends.
func (s *Server) Connect(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return Dial(t, s.URL())
}

// Dial opens a connection to url as Connect does: to a server's SlowLink,
// say.
func Dial(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url,
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond),
		nats.Name(t.Name()),
	)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// Fire is a fire message as a scheduler publishes it (see
// docs/fire-messages.md), for tests that put one into the stream by hand.
type Fire struct {
	// Subject defaults to sched.fire.<Workflow>.<Schedule>.
	Subject            string
	Schedule, Workflow string
	// SlotID defaults to kvstore.SlotID(Schedule, At).
	SlotID           string
	At               time.Time
	Reason, Instance string
	Body             []byte
}

// PublishFire publishes f into the fire stream and returns its stream
// sequence.
func PublishFire(t testing.TB, js jetstream.JetStream, f Fire) uint64 {
	t.Helper()
	if f.Subject == "" {
		f.Subject = kvstore.Layout{}.FireSubject(f.Workflow, f.Schedule)
	}
	if f.SlotID == "" {
		f.SlotID = kvstore.SlotID(f.Schedule, f.At)
	}
	m := nats.NewMsg(f.Subject)
	m.Header.Set(kvstore.HeaderScheduleID, f.Schedule)
	m.Header.Set(kvstore.HeaderWorkflow, f.Workflow)
	m.Header.Set(kvstore.HeaderScheduledAt, f.At.Format(time.RFC3339Nano))
	for h, v := range map[string]string{kvstore.HeaderReason: f.Reason, kvstore.HeaderInstance: f.Instance} {
		if v != "" {
			m.Header.Set(h, v)
		}
	}
	m.Data = f.Body
	ack, err := js.PublishMsg(context.Background(), m, jetstream.WithMsgID(f.SlotID))
	if err != nil {
		t.Fatalf("publish fire %s on %s: %v", f.SlotID, f.Subject, err)
	}
	return ack.Sequence
}

// Store connects (as Connect), creates the default buckets and streams and
// opens a store on them.
func (s *Server) Store(t testing.TB) (jetstream.JetStream, *jsstore.Store) {
	t.Helper()
	_, js := s.Connect(t)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatalf("set up buckets: %v", err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return js, store
}

// Recreate rolls stream back the way an admin could: it deletes the
// stream, creates it again with the same config and publishes its first
// keep messages again, on their subjects (the audit trail's rollback
// attack of issue 14).
func Recreate(t testing.TB, js jetstream.JetStream, stream string, keep int) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	var msgs []*jetstream.RawStreamMsg
	for seq := uint64(1); seq <= uint64(keep); seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("%s message %d: %v", stream, seq, err)
		}
		msgs = append(msgs, m)
	}
	cfg := s.CachedInfo().Config
	if err := js.DeleteStream(ctx, stream); err != nil {
		t.Fatalf("delete %s: %v", stream, err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("create %s again: %v", stream, err)
	}
	for _, m := range msgs {
		if _, err := js.Publish(ctx, m.Subject, m.Data); err != nil {
			t.Fatalf("publish to %s again: %v", stream, err)
		}
	}
}

// PutZeroSlotTick writes the ledger entry of slot slotID of schedule
// (workflow "wf") as schedulers before the fix of issue 51 wrote a
// worker's "completed" report on a trigger's or a backfill's slot: at the
// zero time, "0001-01-01T00:00:00Z", with outcome "w1" by instance "i1".
func PutZeroSlotTick(t testing.TB, js jetstream.JetStream, schedule, slotID string) {
	t.Helper()
	ctx := context.Background()
	ticks, err := js.KeyValue(ctx, kvstore.Layout{}.WithDefaults().TicksBucket)
	if err != nil {
		t.Fatalf("bucket of ticks: %v", err)
	}
	old := `{"schedule":"` + schedule + `","workflow":"wf","slot":"0001-01-01T00:00:00Z","slot_id":"` + slotID +
		`","status":"completed","owner":"i1","at":"2027-01-15T08:00:02Z","outcome":"w1","done_at":"2027-01-15T08:00:02Z"}`
	if _, err := ticks.Put(ctx, slotID, []byte(old)); err != nil {
		t.Fatalf("put tick %s: %v", slotID, err)
	}
}
