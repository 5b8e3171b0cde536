package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/testwait"
)

// full is JetStream's answer to a publish into a full discard-new stream.
var full = &jetstream.APIError{Code: 503, ErrorCode: 10077, Description: "maximum messages exceeded"}

// TestEpisodes: one warning, one Began and a Blocked pair per episode,
// however many refusals; a timeout during a refusal is part of it; an
// acknowledgement ends it, and the next refusal begins another.
func TestEpisodes(t *testing.T) {
	var logs bytes.Buffer
	var began []natserr.Refusal
	var blocked []string
	e := &pipeline.Episodes{Stream: "SCHED_FIRES", Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Began:   func(r natserr.Refusal, id string, err error) { began = append(began, r) },
		Blocked: func(r natserr.Refusal, on bool) { blocked = append(blocked, fmt.Sprintf("%s %v", r, on)) }}
	for i := range 100 {
		e.Refused(fmt.Sprint("s.", i), full)
	}
	if !e.GaveUp("s.1", context.DeadlineExceeded) {
		t.Error("a timeout during a full stream is not part of the episode")
	}
	e.Acknowledged(time.Time{}, false)
	e.Acknowledged(time.Time{}, false)
	if e.StepFailed("s.2", errors.New("conflict")) {
		t.Error("an unrelated step error was taken as part of an episode")
	}
	if !e.StepFailed("shard-3", context.DeadlineExceeded) {
		t.Error("an unanswered lease renewal began no episode")
	}
	e.Acknowledged(time.Time{}, false)
	if want := []natserr.Refusal{natserr.StreamFull, natserr.Unacknowledged}; fmt.Sprint(began) != fmt.Sprint(want) {
		t.Errorf("began %v, want %v", began, want)
	}
	if want := "[stream_full true stream_full false unacknowledged true unacknowledged false]"; fmt.Sprint(blocked) != want {
		t.Errorf("blocked %v, want %s", blocked, want)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d warnings for two episodes:\n%s", n, logs.String())
	}
	var nilEps *pipeline.Episodes
	nilEps.Refused("x", full) // a Publisher without Episodes
	nilEps.Acknowledged(time.Time{}, false)
}

// A publish sent before an episode began and acknowledged late (the
// stream stored it before it stopped taking publishes: a full disk) does
// not end the episode, nor does a duplicate's acknowledgement of a
// publish sent during it (the retry of a message stored before: the
// stream answers it without storing anything, which a full disk's
// TestDiskFull saw end the episode 11 ms after it began); a stored
// publish sent during it does.
func TestEpisodeNotEndedByALateAck(t *testing.T) {
	var blocked []string
	e := &pipeline.Episodes{Blocked: func(r natserr.Refusal, on bool) { blocked = append(blocked, fmt.Sprintf("%s %v", r, on)) }}
	before := time.Now().Add(-time.Second)
	e.StepFailed("shard-1", context.DeadlineExceeded)
	e.Acknowledged(before, false)
	if want := "[unacknowledged true]"; fmt.Sprint(blocked) != want {
		t.Fatalf("after a late ack of an earlier publish: blocked %v, want %s", blocked, want)
	}
	e.Acknowledged(time.Now(), true)
	if want := "[unacknowledged true]"; fmt.Sprint(blocked) != want {
		t.Fatalf("after a duplicate's ack: blocked %v, want %s", blocked, want)
	}
	e.Acknowledged(time.Now(), false)
	if want := "[unacknowledged true unacknowledged false]"; fmt.Sprint(blocked) != want {
		t.Errorf("after an ack of a publish sent during the episode: blocked %v, want %s", blocked, want)
	}
}

// With Quiet, an acknowledgement within it of the last failure does not
// end the episode (another write of the same outage may still be
// failing: a full disk fails the leases bucket's renewals seconds before
// the fire stream's publishes); one past it does.
func TestEpisodeEndsOnlyAfterQuiet(t *testing.T) {
	var blocked []string
	e := &pipeline.Episodes{Quiet: time.Hour, Blocked: func(r natserr.Refusal, on bool) { blocked = append(blocked, fmt.Sprintf("%s %v", r, on)) }}
	e.StepFailed("shard-1", context.DeadlineExceeded)
	e.Acknowledged(time.Now(), false)
	if want := "[unacknowledged true]"; fmt.Sprint(blocked) != want {
		t.Fatalf("an acknowledgement within Quiet: blocked %v, want %s", blocked, want)
	}
	e.Quiet = time.Nanosecond
	testwait.Eventually(t, 5*time.Second, "the episode ended past Quiet", func() bool {
		e.Acknowledged(time.Now(), false)
		return fmt.Sprint(blocked) == "[unacknowledged true unacknowledged false]"
	})
}
