package adminapi

import (
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// validator tells whether a spec is invalid as compile.Validate
// would, sharing zones and parsed crons through an Interner: fleets share
// a few zones and cron expressions, and loading the zone from disk for
// each spec (~25 µs) made the catalogue's load of a million take 43 s.
// The zero validator shares through its own Interner; the daemon gives it
// the scheduler's, so that the process keeps one copy of each.
type validator struct {
	in *compile.Interner
}

// invalid reports whether the spec of id fails Validate.
func (v *validator) invalid(id string, s kvstore.Spec) bool {
	if v.in == nil {
		v.in = new(compile.Interner)
	}
	return compile.Validate(s, id, v.in) != nil
}
