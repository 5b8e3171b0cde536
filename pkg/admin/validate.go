package admin

import (
	"encoding/json"
	"strings"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxVerdicts bounds the validator's memo; past it the memo starts over.
const maxVerdicts = 10_000

// validator tells whether a spec is invalid as kvstore.Spec.Validate
// would, but compiles each distinct cron or business-day recurrence once:
// fleets share a few cron expressions, and compiling a cron in a zone
// costs ~25 µs, which at a million schedules made the catalogue's load
// take 43 s (10.6 s with the memo).
// The fields that do not reach Compile (id, workflow, input, description)
// are checked for each spec, with Validate's rules; the rest is Validate
// itself on the spec without them, memoized by its JSON (and by the id
// when a cron's H hashes it). Not safe for concurrent use.
type validator struct {
	memo map[string]bool
}

// invalid reports whether the spec of id fails Validate.
func (v *validator) invalid(id string, s kvstore.Spec) bool {
	if kvstore.ValidateID(id) != nil || s.ID != "" && s.ID != id || kvstore.ValidateWorkflow(s.Workflow) != nil ||
		kvstore.CheckSize("input", len(s.Input), kvstore.MaxInputBytes) != nil || kvstore.CheckNote("description", s.Description) != nil ||
		len(s.Input) > 0 && !json.Valid(s.Input) {
		return true
	}
	if s.Cron == "" && s.BusinessDay == 0 {
		return s.Validate(id) != nil // intervals and one-shots compile in a few µs
	}
	rest := s
	rest.ID, rest.Workflow, rest.Input, rest.Description = "", "w", nil, ""
	key, on := "", "k"
	if strings.ContainsAny(s.Cron, "Hh") { // H hashes the id
		key, on = id+"\x00", id
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return true
	}
	key += string(b)
	if bad, ok := v.memo[key]; ok {
		return bad
	}
	if v.memo == nil || len(v.memo) >= maxVerdicts {
		v.memo = make(map[string]bool)
	}
	bad := rest.Validate(on) != nil
	v.memo[key] = bad
	return bad
}
