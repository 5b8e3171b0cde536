package soak

// The 10,000 schedules of the soak and their registration.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The mix: how many of each cadence, and how many of each the chaos may
// pause, change or remove (the pool). The first poolX of a class are its
// pool; the 1s and 10s schedules outside it (and off the edited calendar)
// are the ones triggers and backfills target.
const (
	nSec, nTen, nMin          = 1000, 4000, 5000
	poolSec, poolTen, poolMin = 50, 100, 100
	// calEditFrom..calEditTo of the 10s schedules use the calendar the
	// chaos edits (holidaysEdited).
	calEditFrom, calEditTo = 100, 200
)

// Calendar names.
const (
	holidaysStatic = "soak-holidays" // never edited; no holiday during a run
	holidaysEdited = "soak-edit"     // the chaos declares today a holiday and back
)

// zones the cron schedules are read in ("" is UTC); all have whole-minute
// offsets, so */10 seconds stays on the UTC 10 s grid.
var zones = []string{"", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/London"}

// form is one way a schedule fires.
type form struct {
	rec client.Recurrence
	cad cadence
}

// soakSchedule is one schedule and what the chaos did to it.
type soakSchedule struct {
	id, workflow string
	class        string // "sec", "ten", "min"
	// forms[0] is registered at the start; a spec update switches to the
	// other one and back.
	forms [2]form
	cur   int
	opts  []client.Option // zone, calendar, misfire policy
	// pool: the chaos may pause, update and remove it. calEdit: it uses
	// holidaysEdited.
	pool, calEdit bool
	// input is the fire body.
	input map[string]int

	timeline        []segment
	paused, removed bool
}

// touched reports whether anything but triggers and backfills happened to it.
func (s *soakSchedule) touched() bool { return len(s.timeline) > 1 }

// plain reports whether triggers and backfills may target it: a 1s or 10s
// schedule nothing else will touch.
func (s *soakSchedule) plain() bool { return !s.pool && !s.calEdit && s.class != "min" }

func (s *soakSchedule) idle() bool { return !s.paused && !s.removed }

// buildSchedules makes the mix: 1,000 every 1s, 4,000 every 10s (6-field
// cron with seconds, a fifth in each of five zones, one in eight on a
// holiday calendar, 100 on the edited one), 5,000 every minute (half
// every 1m on the minute, half cron at a second of their own in the five
// zones, one in ten on the holiday calendar). Every one is fire_all with a
// 10 minute catch-up window, so a restart's late slots fire rather than
// being recorded missed.
func buildSchedules() []*soakSchedule {
	misfire := client.WithMisfire(kvstore.MisfireFireAll, 10*time.Minute)
	var out []*soakSchedule
	add := func(class string, i int, f0, f1 form, pool bool, opts ...client.Option) *soakSchedule {
		s := &soakSchedule{id: fmt.Sprintf("%s-%04d", class, i), workflow: "soak-" + class, class: class,
			forms: [2]form{f0, f1}, pool: pool, input: map[string]int{"n": i},
			opts: append([]client.Option{misfire}, opts...)}
		out = append(out, s)
		return s
	}
	for i := range nSec {
		add("sec", i, form{client.Every(time.Second), cadence{step: time.Second}},
			form{client.Every(2 * time.Second), cadence{step: 2 * time.Second}}, i < poolSec)
	}
	for i := range nTen {
		var opts []client.Option
		if z := zones[i%len(zones)]; z != "" {
			opts = append(opts, client.InZone(z))
		}
		edited := i >= calEditFrom && i < calEditTo
		switch {
		case edited:
			opts = append(opts, client.WithCalendar(holidaysEdited, calendar.RollSkip))
		case i%8 == 1:
			opts = append(opts, client.WithCalendar(holidaysStatic, calendar.RollSkip))
		}
		alt := form{client.Cron("*/5 * * * * *"), cadence{step: 5 * time.Second}}
		if i%2 == 1 {
			alt = form{client.Cron("*/15 * * * * *"), cadence{step: 15 * time.Second}}
		}
		s := add("ten", i, form{client.Cron("*/10 * * * * *"), cadence{step: 10 * time.Second}}, alt, i < poolTen, opts...)
		s.calEdit = edited
	}
	for i := range nMin {
		if i%2 == 0 {
			add("min", i, form{client.Every(time.Minute), cadence{step: time.Minute}},
				form{client.Every(30 * time.Second), cadence{step: 30 * time.Second}}, i < poolMin)
			continue
		}
		sec := i % 60
		var opts []client.Option
		if z := zones[i%len(zones)]; z != "" {
			opts = append(opts, client.InZone(z))
		}
		if i%10 == 3 {
			opts = append(opts, client.WithCalendar(holidaysStatic, calendar.RollSkip))
		}
		add("min", i,
			form{client.Cron(fmt.Sprintf("%d * * * * *", sec)), cadence{step: time.Minute, phase: time.Duration(sec) * time.Second}},
			form{client.Cron(fmt.Sprintf("%d/30 * * * * *", sec%30)), cadence{step: 30 * time.Second, phase: time.Duration(sec%30) * time.Second}},
			i < poolMin, opts...)
	}
	return out
}

// register writes the schedule's current form and returns the cadence it
// has now. An interval counts from its anchor, which the store sets to the
// time of the first write of that interval (kvstore.Spec.Align "anchor";
// pkg/client's Every does not set align): read back from the stored spec.
func (s *soakSchedule) register(ctx context.Context, c *client.Client, store *jsstore.Store) (cadence, error) {
	opts := append(append([]client.Option{}, s.opts...), client.WithKey(s.id))
	cad := s.forms[s.cur].cad
	if _, err := c.Schedule(ctx, s.workflow, s.input, s.forms[s.cur].rec, opts...); err != nil {
		return cad, fmt.Errorf("register %s (%s): %w", s.id, s.forms[s.cur].rec, err)
	}
	e, err := store.GetSpec(ctx, s.id)
	if err != nil {
		return cad, fmt.Errorf("read back %s: %w", s.id, err)
	}
	if e.Spec.Every != "" && e.Spec.Anchor != nil && (e.Spec.Align == "" || e.Spec.Align == "anchor") {
		cad.phase = time.Duration(floorMod(e.Spec.Anchor.UnixMilli(), cad.step.Milliseconds())) * time.Millisecond
	}
	return cad, nil
}

// registerAll registers every schedule, a few at a time, and starts each
// one's timeline: its slots are owed from the moment its write returned.
func registerAll(ctx context.Context, c *client.Client, store *jsstore.Store, scheds []*soakSchedule) error {
	const par = 6
	work := make(chan *soakSchedule)
	errs := make(chan error, par)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for s := range work {
				begin := time.Now()
				cad, err := s.register(ctx, c, store)
				if err != nil {
					errs <- err
					return
				}
				s.timeline = []segment{{begin: begin, start: time.Now(), cad: cad}}
			}
		})
	}
	var err error
feed:
	for _, s := range scheds {
		select {
		case work <- s:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// holidayJSON is a calendar of holidays (no weekend) in zone: named dates
// far from today, and, when chaos is set, today and tomorrow (UTC) as
// well, so that a run crossing midnight stays on holiday.
func holidayJSON(zone string, today time.Time, chaos bool) []byte {
	type holiday struct {
		Name  string   `json:"name"`
		Date  string   `json:"date,omitempty"`
		Dates []string `json:"dates,omitempty"`
	}
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	hs := []holiday{
		{Name: "Soak day", Dates: []string{day(30), day(31)}},
		{Name: "Soak anniversary", Date: today.AddDate(0, 0, 90).Format("01-02")},
	}
	if chaos {
		hs = append(hs, holiday{Name: "Soak chaos", Dates: []string{day(0), day(1)}})
	}
	b, _ := json.Marshal(map[string]any{"zone": zone, "holidays": hs}) // strings only: cannot fail
	return b
}
