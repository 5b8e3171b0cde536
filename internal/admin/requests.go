package admin

import (
	"encoding/json"
	"time"
)

// Requests.
type (
	// IDRequest names a schedule.
	IDRequest struct {
		ID string `json:"id"`
	}
	// PutRequest carries a schedule for schedule.create and
	// schedule.update. create refuses an id that exists (code conflict)
	// unless Upsert is set; update refuses an id that does not exist
	// (not_found) and, with IfRevision, a spec no longer at that revision
	// (conflict).
	// Without an id, the id is the spec's content hash
	// (kvstore.DefaultKey), which the response gives.
	//
	// schedule.update takes Patch in place of Spec to change some fields
	// only: an object of spec fields, each replacing the stored field's
	// whole value, null removing it. Setting one recurrence (cron, every,
	// at, business_day) removes the others and their own options (a
	// cron's dialect, dom_dow, dst_gap and dst_overlap; an every's align,
	// anchor and phase; a business_day's time) unless the patch sets them
	// too. The patch applies to the schedule as stored when the update is
	// made (with IfRevision, only at that revision).
	//
	// DryRun checks the write and answers as if it were made (the spec as
	// it would be stored, the changes) without writing anything.
	PutRequest struct {
		ID         string          `json:"id,omitempty"`
		Spec       json.RawMessage `json:"spec,omitempty"`
		Patch      json.RawMessage `json:"patch,omitempty"`
		Upsert     bool            `json:"upsert,omitempty"`
		IfRevision uint64          `json:"if_revision,omitempty"`
		DryRun     bool            `json:"dry_run,omitempty"`
	}
	// DeleteRequest removes a schedule; with IfRevision only if its spec
	// is still at that revision.
	DeleteRequest struct {
		ID         string `json:"id"`
		IfRevision uint64 `json:"if_revision,omitempty"`
	}
	// PauseRequest pauses a schedule, with no end, until a time, or for a
	// duration (For, in the one duration grammar: "90m", "2 hours",
	// "1d 3h"; not with Until).
	PauseRequest struct {
		ID    string    `json:"id"`
		Note  string    `json:"note,omitempty"`
		Until time.Time `json:"until,omitzero"`
		For   string    `json:"for,omitempty"`
	}
	// TriggerRequest fires a schedule once now.
	TriggerRequest struct {
		ID   string `json:"id"`
		Note string `json:"note,omitempty"`
	}
	// SkipRequest skips the next Count slots (default 1).
	SkipRequest struct {
		ID    string `json:"id"`
		Count *int   `json:"count,omitempty"`
	}
	// BackfillRequest replays a past range.
	BackfillRequest struct {
		ID   string    `json:"id"`
		From time.Time `json:"from"`
		To   time.Time `json:"to"`
		Rate float64   `json:"rate,omitempty"`
		Note string    `json:"note,omitempty"`
	}
	// CalendarRequest names a calendar; Calendar carries its JSON form for
	// calendar.put, Force removes one in use for calendar.delete.
	CalendarRequest struct {
		Name     string          `json:"name"`
		Calendar json.RawMessage `json:"calendar,omitempty"`
		Force    bool            `json:"force,omitempty"`
	}
)

// PutResponse answers schedule.create and schedule.update: the id (the
// one derived from the spec's content when the request gave none), the
// spec's revision, and what was done. Unchanged: the stored spec is the
// same (specwrite.Same), nothing was written and no audit entry
// recorded; Revision is then the stored one. Spec is the spec as stored
// (with what the store fills in: an every's anchor, a calendar's zone),
// and Changes what the write changed over the stored spec, field by
// field. With DryRun nothing was written: Revision is the stored one (0
// for none) and Spec and Changes are what the write would store.
type PutResponse struct {
	ID        string          `json:"id"`
	Revision  uint64          `json:"revision"`
	Created   bool            `json:"created"`
	Unchanged bool            `json:"unchanged"`
	DryRun    bool            `json:"dry_run,omitempty"`
	Spec      json.RawMessage `json:"spec,omitempty"`
	Changes   []Change        `json:"changes,omitempty"`
}

// Requests of the wakeup verbs.
type (
	// WakeupRequest registers a timer (wakeup.Request's wire form).
	WakeupRequest struct {
		Run       string          `json:"run"`
		Step      string          `json:"step"`
		Workflow  string          `json:"workflow"`
		When      string          `json:"when,omitempty"`
		WhenExpr  string          `json:"when_expr,omitempty"`
		At        time.Time       `json:"at,omitzero"`
		Zone      string          `json:"zone,omitempty"`
		Calendar  string          `json:"calendar,omitempty"`
		Payload   json.RawMessage `json:"payload,omitempty"`
		Condition string          `json:"condition,omitempty"`
		// ConditionKey "BUCKET/KEY" is checked by the scheduler at fire
		// time: unless it holds Condition, the timer is dropped as stale.
		ConditionKey string `json:"condition_key,omitempty"`
		ExpireAfter  string `json:"expire_after,omitempty"`
		// Labels are kept in the timer record (kvstore.Timer.Labels).
		Labels map[string]string `json:"labels,omitempty"`
	}
	// WakeupCancelRequest cancels a timer, or every timer of a run.
	WakeupCancelRequest struct {
		Run  string `json:"run"`
		Step string `json:"step,omitempty"`
	}
	// WakeupGetRequest reads the pending timer of a run at a step.
	WakeupGetRequest struct {
		Run  string `json:"run"`
		Step string `json:"step"`
	}
)

// Change is one field a write changes: its JSON name, and its value before
// and after (absent when the field is not set).
type Change struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from,omitempty"`
	To    json.RawMessage `json:"to,omitempty"`
}
