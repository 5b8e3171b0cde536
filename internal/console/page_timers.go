package console

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// timerPageSize is how many timers a page of the timers list holds.
const timerPageSize = 100

type timersData struct {
	base
	Workflow, Run string
	Groups        []timerGroup
	Total         int
	NextURL       string
	FirstURL      string
}

// timerGroup is the timers of one workflow on the page, by run.
type timerGroup struct {
	Workflow string
	Runs     []timerRun
}

type timerRun struct {
	Run    string
	Timers []timerView
}

type timerView struct {
	admin.TimerItem
	Loc *time.Location
}

func (s *Server) timersPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := timersData{base: s.base(r, "Timers", "timers", topicTimers), Workflow: q.Get("workflow"), Run: q.Get("run")}
	var pg admin.Page[admin.TimerItem]
	status := http.StatusOK
	err := s.api.call(r.Context(), "", "wakeup.list", admin.WakeupListRequest{Run: d.Run, Workflow: d.Workflow, Cursor: q.Get("cursor"), Limit: timerPageSize}, &pg)
	if err != nil {
		d.Error, status = err.Error(), statusOf(err)
	}
	d.Total = pg.Total
	items := pg.Items
	slices.SortStableFunc(items, func(a, b admin.TimerItem) int {
		return cmp.Or(strings.Compare(a.Workflow, b.Workflow), strings.Compare(a.Run, b.Run), a.Due.Compare(b.Due))
	})
	for _, it := range items {
		loc, err := cronx.LoadZone(it.Zone)
		if err != nil {
			loc = time.UTC
		}
		if n := len(d.Groups); n == 0 || d.Groups[n-1].Workflow != it.Workflow {
			d.Groups = append(d.Groups, timerGroup{Workflow: it.Workflow})
		}
		g := &d.Groups[len(d.Groups)-1]
		if n := len(g.Runs); n == 0 || g.Runs[n-1].Run != it.Run {
			g.Runs = append(g.Runs, timerRun{Run: it.Run})
		}
		run := &g.Runs[len(g.Runs)-1]
		run.Timers = append(run.Timers, timerView{TimerItem: it, Loc: loc})
	}
	link := func(cursor string) string {
		v := url.Values{}
		for k, val := range map[string]string{"workflow": d.Workflow, "run": d.Run, "cursor": cursor} {
			if val != "" {
				v.Set(k, val)
			}
		}
		return "/timers?" + v.Encode()
	}
	if pg.NextCursor != "" {
		d.NextURL = link(pg.NextCursor)
	}
	if q.Get("cursor") != "" {
		d.FirstURL = link("")
	}
	s.pages.render(w, status, "timers", d)
}

// cancelTimer cancels a timer (run and step) or every timer of a run
// (run alone) through the admin API.
func (s *Server) cancelTimer(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	who, err := s.mayAct(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	run, step := r.PostFormValue("run"), r.PostFormValue("step")
	if run == "" {
		http.Error(w, "run: required", http.StatusBadRequest)
		return
	}
	if err := s.api.call(r.Context(), who.Actor(), "wakeup.cancel", admin.WakeupCancelRequest{Run: run, Step: step}, nil); err != nil {
		d := timersData{base: s.base(r, "Timers", "timers", topicTimers)}
		d.Error = "cancel " + run + " " + step + ": " + err.Error()
		s.pages.render(w, statusOf(err), "timers", d)
		return
	}
	done := "timer"
	if step == "" {
		done = "timers"
	}
	back := "/timers?done=" + done
	if wf := r.PostFormValue("workflow"); wf != "" {
		back += "&workflow=" + url.QueryEscape(wf)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
