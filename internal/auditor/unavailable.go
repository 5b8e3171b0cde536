package auditor

import (
	"encoding/json"
	"time"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// AppendFailed is the Log's failure handler (auditlog.Log.WithFailure): an
// append the trail did not take. The change it was for has been refused
// (kvstore.ErrAuditUnavailable) or, for an abandoned record or a
// checkpoint, left undone. It logs at error level, counts it
// (jetsched_audit_append_failures_total) and publishes the event
// sched.event.audit_unavailable.<stream>, every time: each is a refused
// request or a record missing from the trail.
func (a *Auditor) AppendFailed(f auditlog.Failure) {
	a.log.Error("audit trail unavailable: append refused", "stream", a.trail.Stream, "action", f.Action, "target", f.Target, "err", f.Err)
	a.cfg.Observer.AuditAppendFailure()
	reason := f.Action + " " + f.Target
	if f.Err != nil {
		reason += ": " + usererr.Message(f.Err)
	}
	ev, _ := json.Marshal(kvstore.Event{Kind: kvstore.EventAuditUnavailable, Schedule: a.trail.Stream, Reason: reason,
		Owner: a.cfg.Instance, At: time.Now().UTC()})
	if err := a.js.Conn().Publish(a.layout.EventSubject(kvstore.EventAuditUnavailable, a.trail.Stream), ev); err != nil {
		a.log.Warn("publish audit_unavailable event", "err", err)
	}
}
