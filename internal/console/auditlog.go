package console

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/audit"
)

// auditEntry is what the console reads of an audit entry. It decodes the
// fields by their JSON names, so it reads the trail of any scheduler
// version: Actor is who the scheduler recorded, ClaimedActor what the
// caller said it was (Sched-Actor) where the scheduler keeps them apart.
type auditEntry struct {
	Kind         string    `json:"kind"`
	At           time.Time `json:"at"`
	Actor        string    `json:"actor"`
	ClaimedActor string    `json:"claimed_actor,omitempty"`
	Action       string    `json:"action"`
	Target       string    `json:"target"`
}

// Who says who acted, as plainly as the entry allows.
func (e auditEntry) Who() string {
	if e.ClaimedActor != "" && e.ClaimedActor != e.Actor {
		return e.Actor + " (as " + e.ClaimedActor + ")"
	}
	return e.Actor
}

// targetChanges is what the trail says of one target.
type targetChanges struct {
	Spec *auditEntry // the last write of its definition (schedule.put)
	Last *auditEntry // the last action of any kind
}

// auditFollower reads the audit trail (SCHED_AUDIT): its last window
// entries at start, then every new one, keeping per target the last
// definition change and the last action. A trail that does not exist (a
// scheduler without --audit-key-file) is looked for again every 10 s.
type auditFollower struct {
	js     jetstream.JetStream
	window int
	log    *slog.Logger

	mu      sync.RWMutex
	targets map[string]targetChanges
	actors  map[string]string // interned actor strings
	state   string            // "" following; else why not

	readmodel.Runner
}

func newAuditFollower(js jetstream.JetStream, window int, log *slog.Logger) *auditFollower {
	return &auditFollower{js: js, window: window, log: log, targets: map[string]targetChanges{},
		actors: map[string]string{}, state: "reading the audit trail"}
}

func (a *auditFollower) start(ctx context.Context) {
	a.Run(ctx, 10*rewatchDelay, a.follow, func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.state = "the audit trail is not readable: " + err.Error()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			a.state = "no audit trail: the schedulers run without --audit-key-file or JETSCHED_AUDIT_KEY"
		}
	})
}

func (a *auditFollower) follow(ctx context.Context) error {
	stream, err := a.js.Stream(ctx, audit.Stream)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return err
	}
	start := info.State.FirstSeq
	if last := info.State.LastSeq; last > uint64(a.window) {
		start = max(start, last-uint64(a.window)+1)
	}
	cons, err := a.js.OrderedConsumer(ctx, audit.Stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(start, 1),
	})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.state = ""
	a.mu.Unlock()
	return eachMsg(ctx, a.js.Conn(), cons, func(m jetstream.Msg) {
		var e auditEntry
		// An abandoned record is about intents, not a target's action.
		if json.Unmarshal(m.Data(), &e) == nil && e.Kind == "action" && e.Target != "" && e.Action != "intent.abandoned" {
			a.record(e)
		}
	})
}

// record keeps e as its target's latest (a removed schedule forgets
// its own).
func (a *auditFollower) record(e auditEntry) {
	key := targetKeyOf(e.Action, e.Target)
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Action == "schedule.delete" {
		delete(a.targets, key)
		return
	}
	e.Actor = a.intern(e.Actor)
	e.ClaimedActor = a.intern(e.ClaimedActor)
	e.Action = a.intern(e.Action)
	e.Target = "" // the key holds it
	t := a.targets[key]
	t.Last = &e
	if e.Action == "schedule.put" {
		t.Spec = &e
	}
	a.targets[key] = t
}

func (a *auditFollower) intern(s string) string {
	if v, ok := a.actors[s]; ok {
		return v
	}
	a.actors[s] = s
	return s
}

// targetKeyOf keys schedules and other targets apart: "schedule.pause"
// on x is about schedule x, "calendar.put" on x about calendar x.
func targetKeyOf(action, target string) string {
	kind, _, _ := strings.Cut(action, ".")
	return kind + "/" + target
}

// changes returns what the trail says of a target of a kind ("schedule",
// "calendar", "wakeup"), and "" or why the trail is not followed.
func (a *auditFollower) changes(kind, target string) (targetChanges, string) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.targets[kind+"/"+target], a.state
}
