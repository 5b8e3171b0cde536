package bench

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/audit"
)

// Audit rounds of an audited run: short enough that digests run all
// through the measured seconds (the work is per message, whatever the
// round; `scheduler run` rounds every minute).
const (
	benchAuditRound  = 2 * time.Second
	benchAuditSettle = 2 * time.Second
)

// benchAudit is an audited scenario's private trail and its random key:
// a bench never writes to the real SCHED_AUDIT.
type benchAudit struct {
	trail audit.Trail
	key   []byte
}

// setupAudit creates the scenario's trail, named after its layout.
func (s *scenario) setupAudit(ctx context.Context) error {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	p := s.layout.Prefix
	a := &benchAudit{key: key, trail: audit.Trail{Stream: strings.ToUpper(p) + "_AUDIT", Subject: p + ".audit", HeadBucket: p + "_audit_head"}}
	if err := auditlog.Setup(ctx, s.r.js, a.trail, 1); err != nil {
		return err
	}
	s.audit = a
	return nil
}

// closeAudit deletes the scenario's trail.
func (s *scenario) closeAudit(ctx context.Context) {
	if s.audit != nil {
		_ = s.r.js.DeleteStream(ctx, s.audit.trail.Stream)
		_ = s.r.js.DeleteStream(ctx, "KV_"+s.audit.trail.HeadBucket)
	}
}

// startAuditor gives an instance the audit duties of `scheduler run
// --audit-key-file`, on the scenario's trail.
func (s *scenario) startAuditor(ctx context.Context, name string, store *jsstore.Store) (*auditor.Auditor, error) {
	log := auditlog.New(store.JetStream(), s.audit.key, "scheduler:"+name).WithTrail(s.audit.trail)
	a, err := auditor.New(auditor.Config{Store: store, Log: log, Key: s.audit.key, Instance: name,
		Round: benchAuditRound, Settle: benchAuditSettle, Logger: s.r.cfg.Logger})
	if err != nil {
		return nil, err
	}
	store.SetAuditor(log.WithRollback(a.Report).WithFailure(a.AppendFailed))
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	return a, nil
}
