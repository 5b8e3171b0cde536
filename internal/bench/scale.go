package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scale models a cold start after a full outage: many schedules that have
// all fired before (a spec and a state record each, written through the
// bulk path), then a scheduler start. It measures the time to the first
// due fire and until every due schedule fired (the canaries), the time
// until the due index is complete, the canaries' lateness, the resident
// memory, and the CPU used while idle. All but a hundred "canary"
// schedules fire daily, none within an hour of the run, as a realistic mix
// (scaleSpec): intervals, crons in five zones, crons on a holiday calendar,
// business-hours-only crons. The canaries are daily schedules whose slot
// came due as the writing began; they are spread evenly through the specs'
// write order (every n/100-th id). The state records are written in the
// order their schedules fired last, as a day of firing leaves them in the
// state bucket's stream: by next slot, so the canaries' first.
func (r *runner) scale(ctx context.Context) ([]Result, error) {
	n := r.cfg.Scale
	if n == 0 {
		return nil, nil
	}
	canaries := min(100, n)
	every := n / canaries
	res := Result{Scenario: "scale", Label: fmt.Sprintf("%d schedules indexed", n), Count: n, Instances: 1}
	s, err := r.newScenario(ctx, "scale")
	if err != nil {
		return nil, err
	}
	defer s.close()
	day := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := s.store.PutCalendar(ctx, "scale", []byte(scaleCalendar)); err != nil {
		return nil, err
	}
	cal, err := calendar.Parse([]byte(scaleCalendar))
	if err != nil {
		return nil, err
	}
	zones, err := loadZones(scaleZones[:])
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	now := t0.UTC().Truncate(time.Second) // the canaries' slot
	spec := func(i int) (string, kvstore.Spec) {
		if i%every == every/2 && i/every < canaries {
			return fmt.Sprintf("c%07d", i), kvstore.Spec{Workflow: "scale", Every: "24h", Anchor: &now, MisfireThreshold: "1h"}
		}
		return fmt.Sprintf("d%07d", i), scaleSpec(i, n, day, zones)
	}
	if err := s.putSpecs(ctx, n, "scale", spec); err != nil {
		return nil, err
	}
	cals := func(string) (*calendar.Calendar, error) { return cal, nil }
	// The records say they were written after the specs, as a schedule's
	// fire leaves them: a spec written after its record is one changed
	// while no scheduler ran, compiled at the load (docs/protocol.md,
	// "Compiled on approach").
	fired := time.Now().UTC()
	// Zones and crons shared, as the scheduler shares them: compiling a
	// million specs alone loaded the zone file from disk each time.
	var shared compile.Interner
	state := func(i int) (string, kvstore.State, error) {
		id, sp := spec(i)
		c, err := compile.Compile(sp, id, cals, &shared)
		if err != nil {
			return "", kvstore.State{}, fmt.Errorf("bench: compile %s: %w", id, err)
		}
		// In UTC, as a scheduler writes its records.
		next := c.Schedule.Next(now.Add(-time.Nanosecond)).UTC()
		return id, kvstore.State{Plan: c.Plan, Next: next, Fires: 1, UpdatedAt: fired}, nil
	}
	order, err := byNext(n, state)
	if err != nil {
		return nil, err
	}
	if err := s.putStates(ctx, n, "scale", func(i int) (string, kvstore.State, error) { return state(order[i]) }); err != nil {
		return nil, err
	}
	write := time.Since(t0)
	rc, err := s.receive(ctx, s.layout.FiresStream, fireSlot, now, now.Add(time.Second))
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	r.progress("scale: %d schedules written in %s; starting the scheduler", n, write.Round(time.Millisecond))
	start, cpuStart := time.Now(), cpuSeconds()
	in, err := s.startScaleMember(ctx)
	if err != nil {
		return nil, err
	}
	defer in.stop()
	done := make(chan error, 1)
	go func() { done <- in.waitReady(ctx) }()
	tk := time.NewTicker(250 * time.Millisecond)
	defer tk.Stop()
	var peakIndexing float64
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				return nil, err
			}
			break wait
		case <-tk.C:
			r.progress("scale: indexing %d schedules: %s", n, time.Since(start).Round(time.Second))
		}
	}
	res.Seconds = time.Since(start).Seconds()
	indexCPU, benchCPU := in.cpu(), cpuSeconds()-cpuStart
	_, peakIndexing, _ = in.rss()
	rc.waitFor(ctx, time.Now().Add(time.Minute), func(rc *receiver) bool { return rc.n >= canaries }, nil)
	rc.mu.Lock()
	if !rc.first.IsZero() {
		res.FirstFireSec = rc.first.Sub(start).Seconds()
		res.AllDueSec = rc.last.Sub(start).Seconds()
	}
	res.Gaps = canaries - rc.n
	rc.mu.Unlock()
	// The listings and the compiles left after the index are waited for
	// at the same time: each is timed from the start on its own.
	listed := ""
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	compiledErr := make(chan error, 1)
	var compiled float64
	var answers pollStats
	go func() {
		var err error
		answers, err = in.compiled(lctx)
		compiled = time.Since(start).Seconds()
		compiledErr <- err
	}()
	if ok, err := in.listings(lctx); err != nil {
		return nil, err
	} else if ok {
		listed = fmt.Sprintf("; listings ready %.1f s after the start", time.Since(start).Seconds())
	}
	if err := <-compiledErr; err != nil {
		return nil, err
	}
	rssNow, rssPeak, rssOf := in.rss()
	res.RSSMiB = rssNow
	if err := in.writeHeap(ctx, r.cfg.MemProfile); err != nil {
		return nil, err
	}
	r.progress("scale: index complete; measuring idle CPU for 5 s")
	cpu0 := in.cpu()
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return nil, err
	}
	res.IdleCPU = (in.cpu() - cpu0) / 5
	rc.latency(&res)
	r.progressDone()
	if _, ok := in.(inProcess); ok {
		indexCPU -= cpuStart // the whole process's, from the start
		benchCPU = 0
	}
	res.Note = fmt.Sprintf("written in %.1f s; RSS of the %s (peak %.0f MiB, %.0f MiB when indexed); CPU while indexing %.1f s (the bench process beside it: %.1f s)%s; every spec compiled %.1f s after the start (meanwhile the slowest health answer took %s, %d of them not within 2 s)",
		write.Seconds(), rssOf, rssPeak, peakIndexing, indexCPU, benchCPU, listed, compiled, answers.slowest.Round(time.Millisecond), answers.unanswered)
	return []Result{res}, nil
}

// byNext is the order of n state records by their next slot.
func byNext(n int, state func(i int) (string, kvstore.State, error)) ([]int, error) {
	next := make([]int64, n)
	order := make([]int, n)
	for i := range n {
		_, st, err := state(i)
		if err != nil {
			return nil, err
		}
		next[i], order[i] = st.Next.UnixNano(), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(next[a], next[b]) })
	return order, nil
}

// scaleCalendar is the holiday calendar of the scale scenario's calendar
// schedules.
const scaleCalendar = `{"zone":"Europe/Paris","holidays":[{"name":"New Year","date":"01-01"},{"name":"Labour Day","date":"05-01"},` +
	`{"name":"Easter Monday","easter":1},{"name":"Christmas","date":"12-25"}]}`

// scaleZones are the zones of the scale scenario's crons; the first is
// the calendar's.
var scaleZones = [...]string{"Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "UTC"}

func loadZones(names []string) ([]*time.Location, error) {
	out := make([]*time.Location, len(names))
	for i, n := range names {
		loc, err := time.LoadLocation(n)
		if err != nil {
			return nil, fmt.Errorf("bench: zone %s: %w", n, err)
		}
		out[i] = loc
	}
	return out, nil
}

// scaleSpec is schedule i of n in the scale scenario's mix, daily, its
// slot between one and 23 hours after start: 40% intervals, 40% crons in
// five zones, 15% crons on a holiday calendar (rolled to the next business
// day), 5% business-hours-only crons.
func scaleSpec(i, n int, start time.Time, zones []*time.Location) kvstore.Spec {
	// In float: i * 22h in int64 nanoseconds overflows past i = 116,000.
	at := start.Add(time.Duration(float64(22*time.Hour) * float64(i) / float64(n)))
	loc := zones[i%len(zones)]
	zone := loc.String()
	wall := at.In(loc)
	cron := fmt.Sprintf("%d %d %d * * *", wall.Second(), wall.Minute(), wall.Hour())
	switch i % 20 {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return kvstore.Spec{Workflow: "scale", Every: "24h", Anchor: &at}
	case 8, 9, 10, 11, 12, 13, 14, 15:
		return kvstore.Spec{Workflow: "scale", Cron: cron, TZ: zone}
	case 16, 17, 18:
		paris := at.In(zones[0])
		return kvstore.Spec{Workflow: "scale", Cron: fmt.Sprintf("%d %d %d * * *", paris.Second(), paris.Minute(), paris.Hour()),
			TZ: "Europe/Paris", Calendar: "scale", HolidayRoll: "next_business_day"}
	}
	return kvstore.Spec{Workflow: "scale", Cron: cron, TZ: zone, BusinessHoursOnly: true}
}
