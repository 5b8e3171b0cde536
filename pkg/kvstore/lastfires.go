package kvstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/directget"
)

// The last fire of many schedules at once.
//
// An instance that takes a shard over reads each schedule's last fire
// before its first decision of a record written by a window claim
// (docs/protocol.md, "Behind the stream"): after a restart of a steady
// fleet, every schedule, all in its first second. The fire stream answers
// direct gets (AllowDirect, set by Setup), and one direct get with
// "multi_last" returns the last message of every subject matching a list
// of filters, so a window's lookups are one request instead of one each.
// A stream without direct gets (an instance of the previous release
// updated it to its own configuration at its start) is read one schedule
// at a time through the JetStream API, as before.

// lastFiresBatch is how many schedules one direct get asks for. The
// server sends at most 1,024 messages an answer (and refuses a request
// that matches more): a schedule that fired under several workflows has
// one subject for each.
const lastFiresBatch = 256

// lastFiresAtOnce bounds the one-by-one lookups of a stream without
// direct gets.
const lastFiresAtOnce = 16

// LastFires looks up the last fire of each of ids, as LastFired does for
// one, and calls fn once for each index of ids with what LastFired would
// return: the fire, ErrNotFound, ErrInvalid for a message on the
// schedule's subject that is not its fire, or the error that kept it from
// being looked up. ids are asked for lastFiresBatch at a time, each batch
// one request to the stream.
func (s *Store) LastFires(ctx context.Context, ids []string, fn func(i int, f Fired, err error)) {
	for retried := false; ; retried = true {
		st, err := s.firesStream(ctx)
		if err != nil {
			for i := range ids {
				fn(i, Fired{}, err)
			}
			return
		}
		if !st.CachedInfo().Config.AllowDirect {
			s.lastFiresEach(ctx, st, ids, fn)
			return
		}
		err = s.lastFiresDirect(ctx, ids, fn)
		if errors.Is(err, directget.ErrNoDirect) && !retried {
			s.forgetFiresStream() // turned off since the handle was made: look again
			continue
		}
		return
	}
}

// lastFiresDirect answers for ids with direct gets, calling fn for each
// but on directget.ErrNoDirect, when it calls fn for none (the caller asks again).
func (s *Store) lastFiresDirect(ctx context.Context, ids []string, fn func(i int, f Fired, err error)) error {
	for from := 0; from < len(ids); from += lastFiresBatch {
		batch := ids[from:min(from+lastFiresBatch, len(ids))]
		msgs, err := s.lastFiresOf(ctx, batch)
		if errors.Is(err, directget.ErrNoDirect) && from == 0 {
			return err
		}
		for i, id := range batch {
			switch {
			case msgs != nil && msgs[i] == tooMany:
				// More subjects than one answer holds for this one
				// schedule: its last message over them all, alone.
				st, serr := s.firesStream(ctx)
				if serr != nil {
					fn(from+i, Fired{}, serr)
					continue
				}
				f, ferr := s.lastFireOf(ctx, st, id)
				fn(from+i, f, ferr)
			case err != nil:
				fn(from+i, Fired{}, err)
			case msgs[i] == nil:
				fn(from+i, Fired{}, NotFound("fire of schedule", id))
			default:
				f, ferr := s.fireOf(id, msgs[i])
				fn(from+i, f, ferr)
			}
		}
	}
	return nil
}

// tooMany stands, in lastFiresOf's answer, for a schedule whose subjects
// are more than one direct get answers for.
var tooMany = new(nats.Msg)

// lastFiresOf is, for each of ids, the last message on its subjects
// (nil: none; tooMany), from one direct get, or from two halves when the
// stream holds more subjects for them than one answer takes.
func (s *Store) lastFiresOf(ctx context.Context, ids []string) ([]*nats.Msg, error) {
	msgs, err := s.directLast(ctx, ids)
	switch {
	case !errors.Is(err, directget.ErrTooMany):
		return msgs, err
	case len(ids) == 1:
		return []*nats.Msg{tooMany}, nil
	}
	half := len(ids) / 2
	first, err := s.lastFiresOf(ctx, ids[:half])
	if err != nil {
		return nil, err
	}
	rest, err := s.lastFiresOf(ctx, ids[half:])
	if err != nil {
		return nil, err
	}
	return append(first, rest...), nil
}

// directLast reads, in one direct get (directget), the last message on
// each of ids' subjects: the highest sequence among a schedule's subjects
// is its last fire.
func (s *Store) directLast(ctx context.Context, ids []string) ([]*nats.Msg, error) {
	subjects := make([]string, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		subjects[i] = s.layout.ScheduleFires(id)
		index[id] = i
	}
	out := make([]*nats.Msg, len(ids))
	seqs := make([]uint64, len(ids))
	err := directget.LastPerSubject(ctx, s.js, s.layout.FiresStream, subjects, func(m *nats.Msg) {
		subj := m.Header.Get(jetstream.SubjectHeader)
		i, ok := index[subj[strings.LastIndexByte(subj, '.')+1:]]
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if ok && err == nil && seq > seqs[i] {
			out[i], seqs[i] = m, seq
		}
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: last fires: %w", err)
	}
	return out, nil
}

// fireOf reads m, the last message on schedule id's subjects, as
// LastFired does.
func (s *Store) fireOf(id string, m *nats.Msg) (Fired, error) {
	seq, _ := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	at, _ := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer))
	return s.checkFire(id, m.Header.Get(jetstream.SubjectHeader), m.Header, seq, at)
}

// checkFire is the fire of schedule id a message holds, ErrInvalid if it
// holds none of id's.
func (s *Store) checkFire(id, subject string, h nats.Header, seq uint64, at time.Time) (Fired, error) {
	f, ok := firedOf(h, s.layout.FiresStream, seq, at)
	if !ok || f.Schedule != id {
		return Fired{}, fmt.Errorf("%w: message %d on %s is not a fire of %q", ErrInvalid, seq, subject, id)
	}
	return f, nil
}

// lastFiresEach answers for ids one at a time through the JetStream API
// (a stream without direct gets), a few at once.
func (s *Store) lastFiresEach(ctx context.Context, st jetstream.Stream, ids []string, fn func(i int, f Fired, err error)) {
	var mu sync.Mutex
	sem := make(chan struct{}, lastFiresAtOnce)
	var wg sync.WaitGroup
	for i, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f, err := s.lastFireOf(ctx, st, id)
			mu.Lock()
			defer mu.Unlock()
			fn(i, f, err)
		})
	}
	wg.Wait()
}

// lastFireOf reads schedule id's last fire through the stream's handle.
func (s *Store) lastFireOf(ctx context.Context, st jetstream.Stream, id string) (Fired, error) {
	m, err := st.GetLastMsgForSubject(ctx, s.layout.ScheduleFires(id))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return Fired{}, NotFound("fire of schedule", id)
	case err != nil:
		return Fired{}, fmt.Errorf("kvstore: last fire of %q in %s: %w", id, s.layout.FiresStream, err)
	}
	return s.checkFire(id, m.Subject, m.Header, m.Sequence, m.Time)
}
