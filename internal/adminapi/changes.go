package adminapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// specChanges lists the fields that differ between prev (nil: none) and
// next, by JSON name in order, with their values before and after.
func specChanges(prev *kvstore.Spec, next kvstore.Spec) ([]admin.Change, error) {
	before := map[string]json.RawMessage{}
	if prev != nil {
		if err := fieldsOf(*prev, before); err != nil {
			return nil, err
		}
	}
	after := map[string]json.RawMessage{}
	if err := fieldsOf(next, after); err != nil {
		return nil, err
	}
	var out []admin.Change
	for _, f := range slices.Sorted(maps.Keys(mergeKeys(before, after))) {
		if f == "id" {
			continue // the key, which no write changes
		}
		a, b := before[f], after[f]
		if bytes.Equal(a, b) {
			continue
		}
		out = append(out, admin.Change{Field: f, From: a, To: b})
	}
	return out, nil
}

// fieldsOf fills m with the spec's JSON fields, each compact.
func fieldsOf(s kvstore.Spec, m map[string]json.RawMessage) error {
	data, err := s.Encode()
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("decode spec fields: %w", err)
	}
	for k, v := range m {
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			m[k] = buf.Bytes()
		}
	}
	return nil
}

// mergeKeys is the set of both maps' keys.
func mergeKeys(a, b map[string]json.RawMessage) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}
