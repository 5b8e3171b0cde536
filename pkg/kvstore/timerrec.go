package kvstore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/jetsched/jetsched/internal/strictjson"
)

// Timer is a pending wakeup: the value of key "<run>.<step>" (each part
// escaped, see package wakeup) in sched_wakeups. Registering the same
// (run, step) again replaces it. Times are UTC on the wire.
type Timer struct {
	Run      string `json:"run"`
	Step     string `json:"step"`
	Workflow string `json:"workflow"`
	// Due is when the wakeup fires.
	Due time.Time `json:"due"`
	// When is the form it was registered with ("48 whours", "02:00"...),
	// with the Zone and Calendar it was computed in.
	When     string `json:"when,omitempty"`
	Zone     string `json:"zone,omitempty"`
	Calendar string `json:"calendar,omitempty"`
	// WhenExpr is the expression the due time was computed from
	// (registered with when_expr), evaluated once at registration.
	WhenExpr string `json:"when_expr,omitempty"`
	// Payload is the wakeup message body, unchanged.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Condition is a token the worker checks before acting (for example
	// the activity the run must still be in); a stale wakeup is dropped.
	// With ConditionKey, it is also the value the scheduler checks.
	Condition string `json:"condition,omitempty"`
	// ConditionKey is "<bucket>/<key>", a KV key the workflow side keeps
	// current: at fire time the scheduler reads it, and a value other
	// than Condition (or no value) drops the timer as stale, unpublished.
	ConditionKey string `json:"condition_key,omitempty"`
	// ExpiresAt drops the timer (recorded as expired) if it has not been
	// delivered by then.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Created   time.Time `json:"created"`
	// Labels are key=value pairs operators select timers by (`scheduler
	// wakeup ls --selector team=billing`), checked as a spec's are.
	Labels map[string]string `json:"labels,omitempty"`
	// Rearms counts "not ready, retry at T" re-registrations.
	Rearms int `json:"rearms,omitempty"`
	// Claim is set while a scheduler fires it.
	Claim *Claim `json:"claim,omitempty"`
}

// WakeupID names one firing of a timer: "wakeup.<key>.<due unix ms>". It
// is the wakeup message's Nats-Msg-Id and its ledger key in sched_ticks.
func WakeupID(key string, due time.Time) string {
	return "wakeup." + key + "." + strconv.FormatInt(due.UnixMilli(), 10)
}

// DecodeTimer parses a sched_wakeups value: a JSON object, no key given
// twice. It does not validate it (ValidateTimer does; a scheduler does
// both with every timer it reads). Errors are *FieldError naming "timer" (or the field holding the
// repeated key).
func DecodeTimer(data []byte) (Timer, error) {
	if err := strictjson.Check(data); err != nil {
		return Timer{}, duplicateKey(err, "timer")
	}
	var t Timer
	if err := json.Unmarshal(data, &t); err != nil {
		return Timer{}, &FieldError{Field: "timer", Reason: "not a timer record (docs/records.md)", Err: err}
	}
	return t, nil
}

// TimerEntry is a timer with its key and revision.
type TimerEntry struct {
	Key      string
	Timer    Timer
	Revision uint64
}
