package jsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// recurrences are the spec fields that say when a schedule fires, each
// with the options that only it reads. Exactly one is set.
var recurrences = []struct {
	field   string
	options []string
}{
	{"cron", []string{"dialect", "dom_dow", "dst_gap", "dst_overlap"}},
	{"every", []string{"align", "anchor", "phase"}},
	{"at", nil},
	{"business_day", []string{"time"}},
}

// PatchSpec changes the fields of schedule id that patch names, over the
// spec stored when the write is made: each field of patch replaces the
// stored field's whole value, null removes it. A patch that sets one
// recurrence (cron, every, at, business_day) removes the others and the
// options only they read, unless it sets those too. The result is checked
// and written as SaveSpec writes (o.IfRevision: only at that revision;
// o.DryRun: not at all), by compare-and-swap on the revision the patch
// was applied to, so a concurrent change is never lost: the patch is
// applied again to it. ErrNotFound when there is no schedule id; a
// *FieldError naming patch or the field when the patch does not make a
// valid spec.
func (s *Store) PatchSpec(ctx context.Context, id string, patch map[string]json.RawMessage, o SaveOptions) (Saved, error) {
	o.Update = true
	if _, ok := patch["id"]; ok {
		return Saved{}, fieldErr("patch", "id", "the id is not a field a patch changes: remove the schedule and add it under the new id")
	}
	return s.saveSpec(ctx, id, o, func(cur jetstream.KeyValueEntry) (kvstore.Spec, error) {
		if cur == nil {
			return kvstore.Spec{}, usererr.NotFound("schedule", id)
		}
		spec, err := applyPatch(cur.Value(), patch)
		if err != nil {
			return spec, err
		}
		if err := o.checkStatic(spec); err != nil {
			return spec, err
		}
		return spec, nil
	})
}

// applyPatch applies patch to a stored spec record (see PatchSpec) and
// decodes the result as a spec record is decoded.
func applyPatch(stored []byte, patch map[string]json.RawMessage) (kvstore.Spec, error) {
	doc := map[string]json.RawMessage{}
	if err := json.Unmarshal(stored, &doc); err != nil {
		return kvstore.Spec{}, fmt.Errorf("%w: the stored spec is not a JSON object (%v): replace it whole", kvstore.ErrInvalid, err)
	}
	for _, r := range recurrences {
		if v, ok := patch[r.field]; !ok || isNull(v) {
			continue
		}
		for _, other := range recurrences {
			if other.field == r.field {
				continue
			}
			for _, f := range append([]string{other.field}, other.options...) {
				if _, given := patch[f]; !given && !slices.Contains(r.options, f) {
					delete(doc, f)
				}
			}
		}
	}
	for k, v := range patch {
		if isNull(v) {
			delete(doc, k)
			continue
		}
		doc[k] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return kvstore.Spec{}, fieldErr("patch", "", err.Error())
	}
	return kvstore.DecodeSpec(data)
}

// isNull reports whether a JSON value is null.
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
