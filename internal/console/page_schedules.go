package console

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/labels"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scheduleRow is one line of the schedule list.
type scheduleRow struct {
	listRow
	Words, Expr, Zone string
	Loc               *time.Location
	Info              *admin.ScheduleInfo // nil when schedule.get failed
	Owner             string
	Err               string
}

type schedulesData struct {
	base
	Query     listQuery
	Rows      []scheduleRow
	Total     int
	Counts    map[string]int
	States    []string
	Workflows []string
	NextURL   string
	FirstURL  string
	Paged     bool
}

// rowFetchers is how many schedule.get requests a list page has in
// flight at once.
const rowFetchers = 16

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := schedulesData{base: s.base(r, "Schedules", "schedules", topicSchedules), States: admin.States}
	d.Query = listQuery{Workflow: q.Get("workflow"), State: q.Get("state"), Text: q.Get("q"), Selector: q.Get("selector"), Limit: s.cfg.PageSize}
	status := http.StatusOK
	after, err := parseCursor(q.Get("after"))
	sel, selErr := labels.Parse("selector", d.Query.Selector)
	switch {
	case err != nil:
		d.Error, status = err.Error(), http.StatusBadRequest
	case selErr != nil:
		d.Error, status = usererr.Message(selErr), http.StatusBadRequest
	case !validState(d.Query.State):
		d.Error, status = "state "+d.Query.State+": want one of active, planned, paused, ended, invalid", http.StatusBadRequest
		d.Query.State = ""
	}
	d.Query.After, d.Query.sel = after, sel
	res := s.index.list(d.Query)
	d.Total, d.Counts, d.Workflows, d.Paged = res.Total, res.Counts, res.Workflows, after.id != ""
	d.Rows = s.detailRows(r.Context(), res.Rows)
	if res.Next != "" {
		d.NextURL = listURL(d.Query, res.Next)
	}
	if d.Paged {
		d.FirstURL = listURL(d.Query, "")
	}
	s.pages.render(w, status, "schedules", d)
}

// listURL is the link to a page of the list with the same filters.
func listURL(q listQuery, after string) string {
	v := url.Values{}
	for k, val := range map[string]string{"workflow": q.Workflow, "state": q.State, "q": q.Text, "selector": q.Selector, "after": after} {
		if val != "" {
			v.Set(k, val)
		}
	}
	if len(v) == 0 {
		return "/schedules"
	}
	return "/schedules?" + v.Encode()
}

// detailRows reads each listed schedule through the admin API
// (schedule.get: spec, state, last slot and its outcome), a few at a time.
func (s *Server) detailRows(ctx context.Context, rows []listRow) []scheduleRow {
	out := make([]scheduleRow, len(rows))
	sem := make(chan struct{}, rowFetchers)
	var wg sync.WaitGroup
	for i, lr := range rows {
		out[i] = scheduleRow{listRow: lr, Loc: time.UTC, Owner: s.index.owner(lr.ID)}
		wg.Add(1)
		sem <- struct{}{}
		go func(sr *scheduleRow) {
			defer wg.Done()
			defer func() { <-sem }()
			var v admin.ScheduleInfo
			if err := s.api.call(ctx, "", "schedule.get", admin.IDRequest{ID: sr.ID}, &v); err != nil {
				sr.Err = err.Error()
				return
			}
			sr.Info = &v
			sr.fill(v.Spec)
		}(&out[i])
	}
	wg.Wait()
	return out
}

// fill sets the row's recurrence and zone from its spec.
func (sr *scheduleRow) fill(spec kvstore.Spec) {
	sr.Words = inWords(spec)
	sr.Expr = recurrenceExpr(spec)
	sr.Loc = compile.Location(spec)
	sr.Zone = sr.Loc.String()
}

// recurrenceExpr is the recurrence as written: the cron expression, the
// interval, the one-shot time or the business-day rule.
func recurrenceExpr(spec kvstore.Spec) string {
	switch {
	case spec.Cron != "":
		return spec.Cron
	case spec.Every != "":
		return "every " + spec.Every
	case spec.At != nil:
		return "at " + spec.At.UTC().Format(time.RFC3339)
	}
	return spec.RecurrenceString()
}
