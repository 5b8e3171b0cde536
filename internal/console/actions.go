package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxForm bounds an action's form.
const maxForm = 64 << 10

// scheduleAction runs one of the schedule page's forms through the admin
// API, as the console user (Sched-Actor: console:<user>), and redirects
// back to the page (POST, redirect, GET), or shows the page again with
// the API's error.
func (s *Server) scheduleAction(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	id, action := r.PathValue("id"), r.PathValue("action")
	who, err := s.mayAct(r)
	if err != nil {
		s.refuse(w, r, id, err)
		return
	}
	if err := kvstore.ValidateID(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	actor := who.Actor()
	var info admin.ScheduleInfo
	if err := s.api.call(ctx, "", "schedule.get", admin.IDRequest{ID: id}, &info); err != nil {
		s.renderSchedule(w, r, id, "", http.StatusNotFound)
		return
	}
	loc := compile.Location(info.Spec)
	done := ""
	switch action {
	case "pause":
		until, perr := parseWhen(r.PostFormValue("until"), loc, time.Now(), true)
		if perr != nil {
			err = fieldError("until", perr)
			break
		}
		err = s.api.call(ctx, actor, "schedule.pause", admin.PauseRequest{ID: id, Note: r.PostFormValue("note"), Until: until}, nil)
		done = "paused"
	case "resume":
		err = s.api.call(ctx, actor, "schedule.resume", admin.IDRequest{ID: id}, nil)
		done = "resumed"
	case "trigger":
		err = s.api.call(ctx, actor, "schedule.trigger", admin.TriggerRequest{ID: id, Note: r.PostFormValue("note")}, nil)
		done = "triggered"
	case "skip":
		n, perr := strconv.Atoi(strings.TrimSpace(r.PostFormValue("count")))
		if perr != nil {
			err = fieldError("count", errors.New("want a whole number of slots"))
			break
		}
		err = s.api.call(ctx, actor, "schedule.skip", admin.SkipRequest{ID: id, Count: &n}, nil)
		done = "skipped"
	case "backfill":
		req := admin.BackfillRequest{ID: id, Note: r.PostFormValue("note")}
		if req.From, err = requiredWhen(r, "from", loc); err != nil {
			break
		}
		if req.To, err = requiredWhen(r, "to", loc); err != nil {
			break
		}
		if rate := strings.TrimSpace(r.PostFormValue("rate")); rate != "" {
			if req.Rate, err = strconv.ParseFloat(rate, 64); err != nil {
				err = fieldError("rate", errors.New("want fires per second, such as 10"))
				break
			}
		}
		err = s.api.call(ctx, actor, "schedule.backfill", req, nil)
		done = "backfill"
	case "backfill-cancel":
		err = s.api.call(ctx, actor, "schedule.backfill.cancel", admin.IDRequest{ID: id}, nil)
		done = "cancelled"
	case "update":
		var preview []admin.Change
		if preview, err = s.update(r, actor, info); err == nil && preview != nil {
			s.renderScheduleWith(w, r, id, "", http.StatusOK, func(d *scheduleData) { d.Preview, d.Previewed, d.Edit = preview, true, formValues(r) })
			return
		}
		done = "updated"
	case "remove":
		if r.PostFormValue("confirm") != id {
			err = fieldError("confirm", fmt.Errorf("type the schedule's id, %s, to remove it", id))
			break
		}
		rev, _ := strconv.ParseUint(r.PostFormValue("revision"), 10, 64)
		err = s.api.call(ctx, actor, "schedule.delete", admin.DeleteRequest{ID: id, IfRevision: rev}, nil)
		if err == nil {
			http.Redirect(w, r, "/schedules?done=removed", http.StatusSeeOther)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		s.log.WarnContext(ctx, "console: action failed", "schedule", id, "action", action, "actor", actor, "err", err)
		s.renderSchedule(w, r, id, action+": "+err.Error(), statusOf(err))
		return
	}
	http.Redirect(w, r, "/schedules/"+url.PathEscape(id)+"?done="+done, http.StatusSeeOther)
}

// refuse answers an action the user may not take.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, id string, err error) {
	s.log.InfoContext(r.Context(), "console: action refused", "schedule", id, "path", r.URL.Path, "err", err)
	if id == "" || kvstore.ValidateID(id) != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	s.renderSchedule(w, r, id, err.Error(), http.StatusForbidden)
}

// statusOf is the HTTP status of a failed action.
func statusOf(err error) int {
	var ae *apiError
	var fe formError
	switch {
	case errors.As(err, &fe):
		return http.StatusBadRequest
	case errors.As(err, &ae):
		switch ae.Code {
		case admin.CodeInvalid:
			return http.StatusBadRequest
		case admin.CodeNotFound:
			return http.StatusNotFound
		case admin.CodeConflict:
			return http.StatusConflict
		}
	}
	return http.StatusBadGateway
}

// formError names the form field that is wrong.
type formError struct {
	field string
	err   error
}

func (e formError) Error() string { return e.field + ": " + e.err.Error() }
func (e formError) Unwrap() error { return e.err }

func fieldError(field string, err error) error { return formError{field: field, err: err} }

// requiredWhen reads a time a form must give.
func requiredWhen(r *http.Request, field string, loc *time.Location) (time.Time, error) {
	t, err := parseWhen(r.PostFormValue(field), loc, time.Now(), false)
	if err == nil && t.IsZero() {
		err = errors.New("required")
	}
	if err != nil {
		return t, fieldError(field, err)
	}
	return t, nil
}

// parseWhen reads a time from a form: RFC 3339, "YYYY-MM-DDTHH:MM[:SS]"
// (what a datetime-local input sends) or "YYYY-MM-DD HH:MM" in the
// schedule's zone, or, when durations are allowed, a duration from now
// ("2h"). "" is the zero time.
func parseWhen(s string, loc *time.Location, now time.Time, durations bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if durations {
		if d, err := timearg.ParseDuration(s); err == nil {
			if d <= 0 {
				return time.Time{}, errors.New("a duration must be positive")
			}
			return now.Add(d), nil
		}
		if t, err := timearg.ParseTime(s, now); err == nil && strings.HasPrefix(strings.ToLower(s), "now") {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	hint := "want RFC 3339 (2026-12-01T09:00:00Z) or 2026-12-01T09:00 in the schedule's zone " + loc.String()
	if durations {
		hint += ", or a duration such as 2h, 2 hours or 1d 3h"
	}
	return time.Time{}, fmt.Errorf("%q: %s", s, hint)
}
