package pipeline

import (
	"log/slog"
	"sync"
	"time"

	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Episodes tracks the stretches of time a stream does not take this
// instance's publishes: full (discard new at its limits), the account at
// its JetStream limits, or no acknowledgement for a whole claim (a store
// that cannot write, a full disk). An episode begins at the first such
// failure and ends at the next acknowledgement; each gets one warning, one
// Began and a Blocked gauge, however many fires it holds back, so that a
// full stream does not log every slot. The messages themselves are
// retried by the Publisher and taken over after their claims expire, as
// always: nothing is recorded as failed, and they land once room returns.
// The zero value tracks nothing but is usable.
type Episodes struct {
	// Stream names the stream in the logs.
	Stream string
	// Log receives one warning per episode and a line when it ends.
	Log *slog.Logger
	// Began, when set, is called once when an episode begins, with why,
	// the first message held back and its error: the observer event.
	Began func(r natserr.Refusal, id string, err error)
	// Blocked, when set, is called when an episode begins (on) and ends:
	// the gauge.
	Blocked func(r natserr.Refusal, on bool)
	// Quiet is how long after the last failure it counts an episode can
	// end (0: at the next acknowledgement). One outage fails different
	// writes at different times: on a full disk the leases bucket's
	// renewals time out, every third of the lease TTL after half of it,
	// while the fire stream still takes publishes for a few seconds; a
	// fire acknowledged in between ended the episode, and the fires' own
	// timeouts began a second (TestDiskFull, 1 run in 15 on a loaded
	// box). DefaultQuiet covers the default lease TTL's silences.
	Quiet time.Duration

	mu       sync.Mutex
	cur      natserr.Refusal
	since    time.Time
	lastFail time.Time
	held     int
}

// DefaultQuiet is Episodes.Quiet for the default lease TTL (10 s): the
// longest silence between two failures of one outage, a renewal every
// third of the TTL each waiting half of it.
const DefaultQuiet = 10 * time.Second

// Refused notes a publish attempt that failed with err; a refusal for
// want of room begins an episode, or extends the current one.
func (e *Episodes) Refused(id string, err error) {
	r := natserr.Classify(err)
	if r != natserr.StreamFull && r != natserr.AccountLimit {
		return
	}
	e.begin(r, id, err)
}

// GaveUp notes a message given up at its claim's deadline (to be taken
// over when the claim expires): without a refusal already under way, one
// not acknowledged for so long begins an unacknowledged episode. It
// reports whether an episode stands for it (else the caller warns).
func (e *Episodes) GaveUp(id string, err error) bool { return e.StepFailed(id, err) }

// StepFailed notes a schedule's or timer's step (a claim, a state write)
// that failed with err: out of room, or unanswered, it begins or extends
// an episode, and quiet is true: the episode's one warning stands for
// it, and the caller logs it at debug level instead of warning per step.
func (e *Episodes) StepFailed(id string, err error) (quiet bool) {
	switch natserr.Classify(err) {
	case natserr.StreamFull, natserr.AccountLimit:
		e.begin(natserr.Classify(err), id, err)
		return e != nil
	case natserr.Unacknowledged:
		e.begin(natserr.Unacknowledged, id, err)
		return e != nil
	}
	return false
}

func (e *Episodes) begin(r natserr.Refusal, id string, err error) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.held++
	e.lastFail = time.Now()
	if e.cur != "" && (e.cur == r || r == natserr.Unacknowledged) {
		e.mu.Unlock()
		return
	}
	prev := e.cur
	e.cur, e.since = r, time.Now()
	e.mu.Unlock()
	if prev != "" && e.Blocked != nil {
		e.Blocked(prev, false)
	}
	if e.Log != nil {
		e.Log.Warn("stream does not take publishes; they are retried until it does, nothing is recorded as failed",
			"stream", e.Stream, "reason", string(r), "id", id, "err", err)
	}
	if e.Blocked != nil {
		e.Blocked(r, true)
	}
	if e.Began != nil {
		e.Began(r, id, err)
	}
}

// Acknowledged notes a publish the stream acknowledged, sent at sent: the
// episode, if any, ends, unless the publish was sent before it began (the
// stream may have stored that one before it stopped taking publishes, and
// acknowledge it late: a full disk does this) or the acknowledgement is a
// duplicate's (the stream had the message already: it answers that from
// its duplicate window without storing anything, even on a full disk, so
// the retry of a message stored before the episode says nothing of room).
// Nor does one within Quiet of the last failure. The zero sent ends it
// (past Quiet).
func (e *Episodes) Acknowledged(sent time.Time, duplicate bool) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if e.cur != "" && (duplicate || !sent.IsZero() && sent.Before(e.since) || time.Since(e.lastFail) < e.Quiet) {
		e.mu.Unlock()
		return
	}
	r, since, held := e.cur, e.since, e.held
	e.cur, e.held = "", 0
	e.mu.Unlock()
	if r == "" {
		return
	}
	if e.Log != nil {
		e.Log.Info("stream takes publishes again", "stream", e.Stream, "reason", string(r),
			"after", time.Since(since).Round(time.Millisecond), "failed_attempts", held)
	}
	if e.Blocked != nil {
		e.Blocked(r, false)
	}
}

// EpisodeEvent is the observer event of an episode that began at at:
// published on sched.event.<kind>.<instance> (no schedule: it is about
// the stream), with the first message held back and its error.
func EpisodeEvent(r natserr.Refusal, instance, stream, id string, err error, at time.Time) kvstore.Event {
	return kvstore.Event{Kind: kvstore.EventKind(r), Instance: instance, Owner: instance, Stream: stream, SlotID: id,
		Reason: err.Error(), At: at.UTC()}
}
