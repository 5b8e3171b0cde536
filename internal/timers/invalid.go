package timers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// read decodes and validates the timer record stored under key, as the
// admin API validates what it writes (kvstore.ValidateTimer), and checks
// that its condition key names a configured condition bucket.
func (e *Engine) read(key string, data []byte) (kvstore.Timer, error) {
	t, err := readTimer(key, data)
	if err != nil {
		return t, err
	}
	return t, e.checkBucket(t)
}

// readTimer decodes and validates the record stored under key:
// kvstore.DecodeTimer, then kvstore.ValidateTimer, the admin API's check.
func readTimer(key string, data []byte) (kvstore.Timer, error) {
	t, err := kvstore.DecodeTimer(data)
	if err != nil {
		return kvstore.Timer{}, err
	}
	return t, kvstore.ValidateTimer(key, t)
}

// checkBucket refuses a condition key outside Config.ConditionBuckets.
func (e *Engine) checkBucket(t kvstore.Timer) error {
	if t.ConditionKey == "" {
		return nil
	}
	return jsstore.CheckConditionBucket(t.ConditionKey, e.cfg.ConditionBuckets)
}

// invalid records a timer record that failed validation (cause): never
// fired, never deleted (the operator sees it with `nats kv get` and
// replaces or removes it), but reported: a failed ledger entry under the
// slot id its key and due time name (the Unix epoch when it has no due
// time), unless one is there already (a real firing's is kept), an
// invalid event on sched.event.invalid.<key>, and a warning, each with
// the reason "invalid record: <field>: <why>".
func (e *Engine) invalid(ctx context.Context, ent kvstore.TimerEntry, cause error) tresult {
	r := tresult{key: ent.Key}
	t, now := ent.Timer, e.cfg.Clock.Now().UTC()
	field, reason := invalidRecordReason(cause)
	slot := t.Due.UTC()
	if slot.IsZero() {
		slot = time.UnixMilli(0).UTC()
	}
	tick := kvstore.Tick{Schedule: "wakeup", SlotID: kvstore.WakeupID(ent.Key, slot), Slot: slot, Status: kvstore.TickFailed,
		Reason: reason, Owner: e.cfg.Instance, At: now}
	if kvstore.ValidateWorkflow(t.Workflow) == nil {
		tick.Workflow = t.Workflow
	}
	if _, err := e.cfg.Store.CreateTick(ctx, tick); err != nil {
		r.err = err
		return r
	}
	e.log.Warn("invalid timer record: not fired; replace or remove it", "key", ent.Key, "revision", ent.Revision, "field", field, "err", cause)
	e.cfg.Observer.Event(kvstore.EventInvalid)
	if e.cfg.Events.Has(kvstore.EventInvalid) {
		ev := kvstore.Event{Kind: kvstore.EventInvalid, Schedule: ent.Key, Slot: t.Due, Field: field, Reason: reason, Owner: e.cfg.Instance, At: now}
		if data, err := json.Marshal(ev); err == nil {
			_ = e.cfg.Store.JetStream().Conn().Publish(e.cfg.Store.Layout().TimerEventSubject(kvstore.EventInvalid, ent.Key), data)
		}
	}
	r.invalid, r.invalidRev = true, ent.Revision
	return r
}
