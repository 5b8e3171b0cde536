package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// editFields are the spec fields the schedule page's edit form shows, by
// JSON name, in its order.
var editFields = []string{"cron", "every", "tz", "description", "input", "misfire", "catchup_window",
	"misfire_threshold", "overlap", "completion_timeout"}

// editValues are the form's values for spec: each field as text ("" for
// none; the input as its JSON).
func editValues(spec kvstore.Spec) map[string]string {
	return map[string]string{
		"cron": spec.Cron, "every": spec.Every, "tz": spec.TZ, "description": spec.Description, "input": string(spec.Input),
		"misfire": string(spec.Misfire), "catchup_window": spec.CatchupWindow, "misfire_threshold": spec.MisfireThreshold,
		"overlap": string(spec.Overlap), "completion_timeout": spec.CompletionTimeout,
	}
}

// update runs the edit form through the admin API's schedule.update with
// a patch of the fields whose value the user changed (an emptied field is
// removed), at the revision the form was shown with. Without "apply" it
// is a dry run: the changes are returned (empty, not nil, for none) and
// nothing is written.
func (s *Server) update(r *http.Request, actor string, info admin.ScheduleInfo) ([]admin.Change, error) {
	was := editValues(info.Spec)
	patch := map[string]json.RawMessage{}
	for _, f := range editFields {
		v := strings.TrimSpace(r.PostFormValue(f))
		if v == was[f] {
			continue
		}
		switch {
		case v == "":
			patch[f] = json.RawMessage("null")
		case f == "input":
			if !json.Valid([]byte(v)) {
				return nil, fieldError("input", errors.New("not valid JSON"))
			}
			patch[f] = json.RawMessage(v)
		default:
			patch[f], _ = json.Marshal(v)
		}
	}
	if len(patch) == 0 {
		return nil, fieldError("update", errors.New("nothing changed: edit a field first"))
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	rev, _ := strconv.ParseUint(r.PostFormValue("revision"), 10, 64)
	dry := r.PostFormValue("apply") == ""
	var out admin.PutResponse
	req := admin.PutRequest{ID: info.ID, Patch: raw, IfRevision: rev, DryRun: dry}
	if err := s.api.call(r.Context(), actor, "schedule.update", req, &out); err != nil {
		return nil, err
	}
	if !dry {
		return nil, nil
	}
	if out.Changes == nil {
		out.Changes = []admin.Change{}
	}
	return out.Changes, nil
}

// formValues are the edit form's values as submitted, to show them again
// with the preview of their changes.
func formValues(r *http.Request) map[string]string {
	m := make(map[string]string, len(editFields))
	for _, f := range editFields {
		m[f] = strings.TrimSpace(r.PostFormValue(f))
	}
	return m
}
