package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// How much of a schedule the page shows.
const (
	nextFires     = 20
	historyRows   = 50
	accountRows   = 50
	headerFires   = 5
	monthMaxTicks = 1000
)

type scheduleData struct {
	base
	ID       string
	Info     admin.ScheduleInfo
	Row      scheduleRow
	State    string
	Input    string
	Changes  targetChanges
	AuditMsg string
	Next     []nextFire
	NextErr  string
	Month    monthView
	History  []admin.HistoryItem
	HistNext string
	HistErr  string
	// Account is the accounting of the ledger's retention: its summary
	// and a page of the entries that did not fire (accountFates).
	Account admin.AccountPage
	AccErr  string
	Headers []fireHeaders
	HeadErr string
	// Describe is what `scheduler schedule describe` shows (the settings
	// as run, the last actions with their reasons, the next fires with
	// their explanations and jitter offsets), from schedule.describe.
	Describe admin.Description
	DescErr  string
	Calendar string
	Now      time.Time
	// Edit holds the edit form's values (editValues); Preview, once
	// Previewed, what the form's dry run would change.
	Edit      map[string]string
	Preview   []admin.Change
	Previewed bool
}

// nextFire is one coming fire time and what moved or skipped it.
type nextFire struct {
	At    time.Time
	Notes []string
}

// fireHeaders are the headers of one fire message.
type fireHeaders struct {
	SlotID string
	Seq    uint64
	Header [][2]string
}

func (s *Server) schedulePage(w http.ResponseWriter, r *http.Request) {
	s.renderSchedule(w, r, r.PathValue("id"), "", http.StatusOK)
}

// renderSchedule renders a schedule's page, with errMsg (from an action)
// at the top.
func (s *Server) renderSchedule(w http.ResponseWriter, r *http.Request, id, errMsg string, status int) {
	s.renderScheduleWith(w, r, id, errMsg, status, nil)
}

// renderScheduleWith is renderSchedule with more for the page (with: nil
// for nothing), set once the page's data is read.
func (s *Server) renderScheduleWith(w http.ResponseWriter, r *http.Request, id, errMsg string, status int, with func(*scheduleData)) {
	ctx := r.Context()
	d := scheduleData{base: s.base(r, id, "schedules", topicSchedule(id)), ID: id, Now: time.Now()}
	d.Error = errMsg
	if err := kvstore.ValidateID(id); err != nil {
		d.Error = err.Error()
		s.pages.render(w, http.StatusBadRequest, "schedule", d)
		return
	}
	if err := s.api.call(ctx, "", "schedule.get", admin.IDRequest{ID: id}, &d.Info); err != nil {
		d.Error = err.Error()
		status = http.StatusBadGateway
		if isNotFound(err) {
			d.Error, status = fmt.Sprintf("There is no schedule %q (removed, or never added).", id), http.StatusNotFound
		}
		s.pages.render(w, status, "schedule", d)
		return
	}
	v := d.Info
	d.Row = scheduleRow{listRow: listRow{ID: id, Workflow: v.Spec.Workflow, State: readmodel.StateOf(v)}, Info: &d.Info, Owner: s.index.owner(id)}
	d.Row.fill(v.Spec)
	d.State = readmodel.StateOf(v)
	if len(v.Spec.Input) > 0 {
		d.Input = string(v.Spec.Input)
	}
	d.Changes, d.AuditMsg = s.audit.changes("schedule", id)
	d.Edit = editValues(v.Spec)
	if with != nil {
		with(&d)
	}
	d.Calendar = v.Spec.Calendar
	month, err := parseMonth(r.URL.Query().Get("month"), d.Row.Loc, d.Now)
	if err != nil {
		d.Error, status = err.Error(), http.StatusBadRequest
	}
	d.HistNext, d.HistErr = s.history(ctx, id, r.URL.Query().Get("hcursor"), &d.History)
	d.Headers, d.HeadErr = s.fireHeaders(ctx, d.History)
	d.AccErr = s.accounting(ctx, id, r.URL.Query().Get("acursor"), &d.Account)
	d.DescErr = s.describe(ctx, id, &d.Describe)
	compiled, cal, err := s.compile(ctx, id, v.Spec)
	if err != nil {
		d.NextErr = err.Error()
	} else {
		d.Next = explainNext(id, compiled, startOf(v.State, d.Now), nextFires)
	}
	ticks := s.monthTicks(ctx, id, month)
	d.Month = buildMonth(month, d.Row.Loc, d.Now, compiled.Schedule, cal, ticks, r.URL.Query())
	s.pages.render(w, status, "schedule", d)
}

// startOf is where the next fires are counted from: now, or just before
// an overdue next slot (so that it is the first).
func startOf(st *kvstore.State, now time.Time) time.Time {
	if st != nil && !st.Next.IsZero() && !st.Ended && st.Next.Before(now) {
		return st.Next.Add(-time.Nanosecond)
	}
	return now
}

// history reads one page of the ledger through the admin API.
func (s *Server) history(ctx context.Context, id, cursor string, out *[]admin.HistoryItem) (next, errMsg string) {
	var pg admin.Page[admin.HistoryItem]
	if err := s.api.call(ctx, "", "schedule.history", admin.HistoryRequest{ID: id, Cursor: cursor, Limit: historyRows}, &pg); err != nil {
		return "", err.Error()
	}
	*out = pg.Items
	return pg.NextCursor, ""
}

// accountFates are the fates the accounting section lists: the slots
// that did not fire, and those nothing accounts for.
func accountFates() []string {
	return []string{account.FateNotFired, account.FateMerged, account.FateSkipped, account.FateUnaccounted}
}

// accounting reads, through the admin API, the account of the schedule
// over the ledger's retention (the API's default range): the summary of
// every owed slot, and a page of those that did not fire from cursor.
func (s *Server) accounting(ctx context.Context, id, cursor string, out *admin.AccountPage) (errMsg string) {
	if err := s.api.call(ctx, "", "schedule.account", admin.AccountRequest{ID: id, Cursor: cursor, Limit: accountRows, Fates: accountFates()}, out); err != nil {
		return err.Error()
	}
	return ""
}

// describe reads the schedule's describe view through the admin API, with
// the counts of `scheduler schedule describe`.
func (s *Server) describe(ctx context.Context, id string, out *admin.Description) (errMsg string) {
	req := admin.DescribeRequest{ID: id, Actions: admin.DefaultDescribeActions, Next: admin.DefaultDescribeNext}
	if err := s.api.call(ctx, "", "schedule.describe", req, out); err != nil {
		return err.Error()
	}
	return ""
}

// fireHeaders reads the headers of the most recent fire messages the
// ledger points at (stream and sequence).
func (s *Server) fireHeaders(ctx context.Context, hist []admin.HistoryItem) ([]fireHeaders, string) {
	var out []fireHeaders
	for _, h := range hist {
		if len(out) == headerFires {
			break
		}
		if h.Seq == 0 || h.Stream == "" {
			continue
		}
		stream, err := s.js.Stream(ctx, h.Stream)
		if err != nil {
			return out, fmt.Sprintf("stream %s: %v", h.Stream, err)
		}
		m, err := stream.GetMsg(ctx, h.Seq)
		if err != nil {
			out = append(out, fireHeaders{SlotID: h.Key(), Seq: h.Seq, Header: [][2]string{{"(message)", "not in the stream any more: " + err.Error()}}})
			continue
		}
		fh := fireHeaders{SlotID: h.Key(), Seq: h.Seq}
		keys := make([]string, 0, len(m.Header))
		for k := range m.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fh.Header = append(fh.Header, [2]string{k, strings.Join(m.Header.Values(k), ", ")})
		}
		out = append(out, fh)
	}
	return out, ""
}

// compile builds the schedule as the engine does (compile.Compile),
// resolving a named calendar through the admin API.
func (s *Server) compile(ctx context.Context, id string, spec kvstore.Spec) (compile.Compiled, *calendar.Calendar, error) {
	src := func(name string) (*calendar.Calendar, error) {
		var raw json.RawMessage
		if err := s.api.call(ctx, "", "calendar.get", admin.CalendarRequest{Name: name}, &raw); err != nil {
			if isNotFound(err) {
				return nil, fmt.Errorf("%w: calendar %q", kvstore.ErrNotFound, name)
			}
			return nil, err
		}
		return calendar.Parse(raw)
	}
	c, err := compile.Compile(spec, id, src, nil)
	if err != nil {
		return c, nil, err
	}
	return c, c.Calendar, nil
}

// explainNext lists n fire times after from, each with what moved it and
// what was skipped before it (cronx.Explain, as `scheduler preview
// --explain`), and for a schedule with a jitter each fire's offset and
// instant (schedule id's slot at that time).
func explainNext(id string, c compile.Compiled, from time.Time, n int) []nextFire {
	var out []nextFire
	sched := c.Schedule
	st := cronx.Explain(sched, from)
	for i := range n {
		if i > 0 {
			st = cronx.ExplainAfter(sched, st.At, st.Nominal)
		}
		if st.At.IsZero() {
			break
		}
		f := nextFire{At: st.At, Notes: st.Notes(st.At.Location(), "2006-01-02 15:04 MST")}
		if j := c.Policy.Jitter; j > 0 {
			off := compile.JitterOffset(id, st.At, j)
			f.Notes = append(f.Notes, fmt.Sprintf("jitter +%s: fires %s", off, st.At.Add(off).Format("2006-01-02 15:04:05 MST")))
		}
		out = append(out, f)
	}
	return out
}

// monthTicks reads the ledger entries of a month (newest first, at most
// monthMaxTicks: the ledger keeps a day by default).
func (s *Server) monthTicks(ctx context.Context, id string, month time.Time) []admin.HistoryItem {
	end := month.AddDate(0, 1, 0)
	var out []admin.HistoryItem
	cursor := ""
	for len(out) < monthMaxTicks {
		var pg admin.Page[admin.HistoryItem]
		if err := s.api.call(ctx, "", "schedule.history", admin.HistoryRequest{ID: id, Cursor: cursor, Limit: admin.MaxLimit}, &pg); err != nil {
			return out
		}
		for _, it := range pg.Items {
			if it.Slot.Before(month) {
				return out
			}
			if it.Slot.Before(end) {
				out = append(out, it)
			}
		}
		if pg.NextCursor == "" {
			return out
		}
		cursor = pg.NextCursor
	}
	return out
}

// parseMonth reads ?month=YYYY-MM (default: now's month), as the first
// instant of that month in loc.
func parseMonth(s string, loc *time.Location, now time.Time) (time.Time, error) {
	if s == "" {
		n := now.In(loc)
		return time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc), nil
	}
	t, err := time.ParseInLocation("2006-01", s, loc)
	if err != nil {
		n := now.In(loc)
		return time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc), errors.New("month " + s + ": want YYYY-MM")
	}
	return t, nil
}
