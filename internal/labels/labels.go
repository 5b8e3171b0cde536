package labels

import (
	"maps"
	"slices"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// ParsePairs reads `--label k=v` flags (each "k=v", or "k=" for an empty
// value) into a map, checked as a record's labels are
// (fieldcheck.Labels). A key given twice is an error. Errors are
// *fieldcheck.FieldError naming "labels" or "labels.<key>".
func ParsePairs(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fieldcheck.New("labels", p, "want KEY=VALUE (team=billing)")
		}
		if _, dup := m[k]; dup {
			return nil, fieldcheck.New("labels."+k, p, "given twice")
		}
		m[k] = v
	}
	return m, fieldcheck.Labels(m)
}

// Format is labels as "k=v,k2=v2" in key order ("" for none): the LABELS
// column of the listings, and a selector that matches exactly these
// pairs.
func Format(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + m[k])
	}
	return b.String()
}

// Sets numbers the distinct label sets of a read model, so that each of
// its rows keeps a uint32 and a million rows with the same few label sets
// keep those sets once. 0 is the empty set. A set once numbered keeps its
// number (as the read models' interned workflow names do): their count is
// the count of distinct sets ever seen. Not safe for concurrent use: the
// read model's lock guards it.
type Sets struct {
	ids  map[string]uint32
	sets []map[string]string
}

// ID returns the number of m, adding it when new. The map is copied.
func (s *Sets) ID(m map[string]string) uint32 {
	if len(m) == 0 {
		return 0
	}
	key := Format(m)
	if id, ok := s.ids[key]; ok {
		return id
	}
	if s.ids == nil {
		s.ids, s.sets = map[string]uint32{}, []map[string]string{nil}
	}
	id := uint32(len(s.sets))
	s.ids[key] = id
	s.sets = append(s.sets, maps.Clone(m))
	return id
}

// Get is the set numbered id (nil for 0 or an unknown number). The
// caller must not change it.
func (s *Sets) Get(id uint32) map[string]string {
	if int(id) >= len(s.sets) {
		return nil
	}
	return s.sets[id]
}

// Matcher answers sel for rows by their set number, deciding each set
// once: a listing over a million rows decides as many times as there are
// distinct sets.
func (s *Sets) Matcher(sel Selector) func(id uint32) bool {
	if sel.Empty() {
		return func(uint32) bool { return true }
	}
	seen := map[uint32]bool{}
	return func(id uint32) bool {
		ok, known := seen[id]
		if !known {
			ok = sel.Matches(s.Get(id))
			seen[id] = ok
		}
		return ok
	}
}
