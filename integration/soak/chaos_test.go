package soak

// Operator chaos: at random intervals an operator triggers, backfills,
// pauses and resumes, changes a cadence, removes and re-adds a schedule
// (pkg/client), or edits a calendar (the CLI). Each action that changes
// which regular slots are owed starts a segment of the schedule's timeline.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/client"
)

// grace is how long an action may take to reach every scheduler (a KV
// watch on a loaded box): slots within it of an action may go either way.
const grace = 5 * time.Second

// lead is how long before an action a slot may have been due and still
// meet the schedule as the action left it: fired late after its owner
// crashed (a takeover waits for the claim TTL, 30s, after the lease TTL,
// 10s), it is judged paused, removed, re-planned or on a holiday, and
// rightly not fired. Such slots are not owed.
const lead = 45 * time.Second

// Holidays of the edited calendar last 15 to 40 s, with at least
// holidayGap between them, so that its schedules owe slots in between.
const holidayGap = 90 * time.Second

type chaos struct {
	c        *client.Client
	store    *jsstore.Store
	bin, url string
	rng      *rand.Rand
	today    time.Time

	pool, calEdit, plain []*soakSchedule
	pending              []pendingAction
	holiday              bool
	// holidayEnds is when a holiday ends; holidayOff when the last ended.
	holidayEnds, holidayOff time.Time

	triggers  map[string]string // slot id -> schedule id
	backfills []backfillReq
	counts    map[string]int
	errs      []string
}

// pendingAction undoes a pause or a removal at a time.
type pendingAction struct {
	at time.Time
	s  *soakSchedule
}

// backfillReq is one backfill: the schedule's slots in [from, to].
type backfillReq struct {
	s        *soakSchedule
	from, to time.Time
}

func newChaos(c *client.Client, store *jsstore.Store, bin, url string, seed uint64, today time.Time, scheds []*soakSchedule) *chaos {
	ch := &chaos{c: c, store: store, bin: bin, url: url, rng: rand.New(rand.NewPCG(seed, seed^0x50a4)), today: today,
		triggers: map[string]string{}, counts: map[string]int{}}
	for _, s := range scheds {
		switch {
		case s.pool:
			ch.pool = append(ch.pool, s)
		case s.calEdit:
			ch.calEdit = append(ch.calEdit, s)
		case s.plain():
			ch.plain = append(ch.plain, s)
		}
	}
	return ch
}

// run acts every 1 to 5 s until end.
func (ch *chaos) run(ctx context.Context, end time.Time) {
	for time.Now().Before(end) && ctx.Err() == nil {
		if !sleepCtx(ctx, min(time.Until(end), time.Second+time.Duration(ch.rng.Int64N(int64(4*time.Second))))) {
			return
		}
		ch.undoDue(ctx, false)
		if time.Now().After(end) {
			return
		}
		switch n := ch.rng.IntN(12); {
		case n < 3:
			ch.trigger(ctx)
		case n < 5:
			ch.backfill(ctx)
		case n < 7:
			ch.pause(ctx)
		case n < 9:
			ch.update(ctx)
		case n < 11:
			ch.remove(ctx)
		default:
			if !ch.holiday && time.Since(ch.holidayOff) >= holidayGap {
				ch.editCalendar(ctx, true)
				ch.holidayEnds = time.Now().Add(15*time.Second + time.Duration(ch.rng.Int64N(int64(25*time.Second))))
			}
		}
	}
}

// finish resumes and re-adds what is still paused or removed and ends the
// holiday: at the end every schedule is due again.
func (ch *chaos) finish(ctx context.Context) {
	ch.undoDue(ctx, true)
}

func (ch *chaos) fail(format string, args ...any) {
	ch.errs = append(ch.errs, time.Now().UTC().Format(time.TimeOnly)+" "+fmt.Sprintf(format, args...))
}

// act runs one call with a deadline and returns when it began and returned.
func act(ctx context.Context, fn func(ctx context.Context) error) (begin, end time.Time, err error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	begin = time.Now()
	err = fn(ctx)
	return begin, time.Now(), err
}

func (ch *chaos) pick(from []*soakSchedule) *soakSchedule {
	for range 20 {
		if s := from[ch.rng.IntN(len(from))]; s.idle() {
			return s
		}
	}
	return nil
}

func (ch *chaos) trigger(ctx context.Context) {
	s := ch.plain[ch.rng.IntN(len(ch.plain))]
	var slot string
	_, _, err := act(ctx, func(ctx context.Context) (err error) {
		slot, err = ch.c.Trigger(ctx, s.id, "soak chaos")
		return err
	})
	if err != nil {
		ch.fail("trigger %s: %v", s.id, err)
		return
	}
	ch.triggers[slot] = s.id
	ch.counts["trigger"]++
}

// backfill replays a short past range of a plain schedule: ten 1s slots
// 30 to 40 s ago, or six 10s slots 80 to 140 s ago, at 5 per second. The
// range's ends are off the slots, so that none is on an edge.
func (ch *chaos) backfill(ctx context.Context) {
	s := ch.plain[ch.rng.IntN(len(ch.plain))]
	step, back, n := time.Second, 40*time.Second, 10
	if s.class == "ten" {
		step, back, n = 10*time.Second, 140*time.Second, 6
	}
	from := time.Now().Add(-back).Truncate(step).Add(step / 2)
	to := from.Add(time.Duration(n) * step)
	if !from.After(s.timeline[0].start.Add(grace)) {
		return // younger than the range
	}
	if _, _, err := act(ctx, func(ctx context.Context) error { return ch.c.Backfill(ctx, s.id, from, to, 5) }); err != nil {
		ch.fail("backfill %s [%s, %s]: %v", s.id, from.Format(time.TimeOnly), to.Format(time.TimeOnly), err)
		return
	}
	ch.backfills = append(ch.backfills, backfillReq{s: s, from: from, to: to})
	ch.counts["backfill"]++
}

// backfillSlots is the slot ids a backfill owes: its schedule's slots in
// the range.
func (b backfillReq) backfillSlots() []string {
	c := b.s.timeline[0].cad
	var out []string
	for ms := c.after(b.from.UnixMilli() - 1); ms <= b.to.UnixMilli(); ms += c.step.Milliseconds() {
		out = append(out, slotid.Extra(b.s.id, "backfill", time.UnixMilli(ms)))
	}
	return out
}

// undoLater queues the resume or re-add of s in 5 to 40 s.
func (ch *chaos) undoLater(s *soakSchedule) {
	ch.pending = append(ch.pending, pendingAction{at: time.Now().Add(5*time.Second + time.Duration(ch.rng.Int64N(int64(35*time.Second)))), s: s})
}

func (ch *chaos) pause(ctx context.Context) {
	ch.suspend(ctx, "pause", func(ctx context.Context, s *soakSchedule) error {
		return ch.c.Pause(ctx, s.id, "soak chaos", time.Time{})
	}, func(s *soakSchedule) { s.paused = true })
}

func (ch *chaos) remove(ctx context.Context) {
	ch.suspend(ctx, "remove", func(ctx context.Context, s *soakSchedule) error {
		return ch.c.Unschedule(ctx, s.id)
	}, func(s *soakSchedule) { s.removed = true })
}

// suspend pauses or removes an idle pool schedule (call), marks it (mark)
// and queues its undoing: no slot is owed from then on.
func (ch *chaos) suspend(ctx context.Context, what string, call func(context.Context, *soakSchedule) error, mark func(*soakSchedule)) {
	s := ch.pick(ch.pool)
	if s == nil {
		return
	}
	begin, end, err := act(ctx, func(ctx context.Context) error { return call(ctx, s) })
	if err != nil {
		ch.fail("%s %s: %v", what, s.id, err)
		return
	}
	mark(s)
	s.timeline = append(s.timeline, segment{begin: begin, start: end, grace: grace, lead: lead})
	ch.undoLater(s)
	ch.counts[what]++
}

// update switches a schedule to its other cadence.
func (ch *chaos) update(ctx context.Context) {
	s := ch.pick(ch.pool)
	if s == nil {
		return
	}
	s.cur = 1 - s.cur
	var cad cadence
	begin, end, err := act(ctx, func(ctx context.Context) (err error) {
		cad, err = s.register(ctx, ch.c, ch.store)
		return err
	})
	if err != nil {
		ch.fail("update %s: %v", s.id, err)
		return
	}
	s.timeline = append(s.timeline, segment{begin: begin, start: end, grace: grace, lead: lead, cad: cad})
	ch.counts["update"]++
}

// undoDue resumes or re-adds the schedules whose time has come (all of them
// with all).
func (ch *chaos) undoDue(ctx context.Context, all bool) {
	if ch.holiday && (all || !time.Now().Before(ch.holidayEnds)) {
		ch.editCalendar(ctx, false)
	}
	keep := ch.pending[:0]
	for _, p := range ch.pending {
		if !all && time.Now().Before(p.at) {
			keep = append(keep, p)
			continue
		}
		s, what := p.s, "resume"
		cad := s.timeline[len(s.timeline)-2].cad // as before the pause
		call := func(ctx context.Context) error { return ch.c.Resume(ctx, s.id) }
		if s.removed {
			what, call = "re-add", func(ctx context.Context) (err error) {
				cad, err = s.register(ctx, ch.c, ch.store)
				return err
			}
		}
		begin, end, err := act(ctx, call)
		if err != nil {
			ch.fail("%s %s: %v", what, s.id, err)
			continue
		}
		s.paused, s.removed = false, false
		s.timeline = append(s.timeline, segment{begin: begin, start: end, grace: grace, lead: lead, cad: cad})
		ch.counts[what]++
	}
	ch.pending = slices.Clip(keep)
}

// editCalendar declares today (and tomorrow) a holiday of holidaysEdited,
// or takes it back, with `scheduler calendar put`.
func (ch *chaos) editCalendar(ctx context.Context, holiday bool) {
	begin, end, err := act(ctx, func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, ch.bin, "calendar", "put", holidaysEdited, "-", "--nats-url", ch.url, "--log-format", "json")
		cmd.Stdin = bytes.NewReader(holidayJSON("UTC", ch.today, holiday))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
	if err != nil {
		ch.fail("calendar put %s (holiday %v): %v", holidaysEdited, holiday, err)
		return
	}
	ch.holiday = holiday
	if !holiday {
		ch.holidayOff = end
	}
	for _, s := range ch.calEdit {
		seg := segment{begin: begin, start: end, grace: grace, lead: lead}
		if !holiday {
			seg.cad = s.timeline[0].cad // cron: no anchor, never updated
		}
		s.timeline = append(s.timeline, seg)
	}
	ch.counts["calendar"]++
}
