// Package staticfile reads the files of `scheduler run --schedules`: a
// set of static schedules in JSON or YAML,
//
//	source: billing            # optional label; default: the file's base name
//	schedules:
//	  - id: monthly-invoice    # optional; default: the content hash
//	    workflow: invoice
//	    cron: "0 9 1 * *"
//	    tz: Europe/Paris
//
// each schedule a spec of docs/records.md with its id. A file is read
// strictly: an unknown field, a key given twice or a value of the wrong
// type is an error naming the file, the entry and the field.
package staticfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/regfile"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// MaxFileBytes caps a schedules file: Load reads no more of it (a device
// or a FIFO given by mistake is refused, not read without end).
const MaxFileBytes = 64 << 20

// file is a schedules file's JSON form.
type file struct {
	Source    string            `json:"source,omitempty"`
	Schedules []json.RawMessage `json:"schedules"`
}

// Load reads and checks the schedules file at path (Parse) and returns its
// set, ready for kvstore.Store.ApplyStatic.
func Load(path string) (jsstore.StaticSet, error) {
	data, err := regfile.Read(path, MaxFileBytes)
	if err != nil {
		return jsstore.StaticSet{}, fileError(path, err)
	}
	return Parse(path, data)
}

// Parse reads a schedules file's content; path names it in errors, and
// its extension chooses the format: .json is JSON, anything else YAML (of
// which JSON is a subset). Every schedule is checked (kvstore.StaticSet's
// Resolve); an error matches kvstore.ErrInvalid and names the file, the
// entry (1-based), its id and the field.
func Parse(path string, data []byte) (jsstore.StaticSet, error) {
	if len(data) > MaxFileBytes {
		return jsstore.StaticSet{}, fileError(path, fmt.Errorf("%d bytes, over the maximum of %d", len(data), MaxFileBytes))
	}
	raw := data
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		var err error
		if raw, err = yamlToJSON(data); err != nil {
			return jsstore.StaticSet{}, fileError(path, err)
		}
	}
	if err := strictjson.Check(raw); err != nil {
		return jsstore.StaticSet{}, fileError(path, err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return jsstore.StaticSet{}, fileError(path, fmt.Errorf(`want {"source": LABEL, "schedules": [SPEC, ...]}: %w`, err))
	}
	set := jsstore.StaticSet{Source: f.Source, Schedules: make([]jsstore.StaticSchedule, len(f.Schedules))}
	if set.Source == "" {
		set.Source = filepath.Base(path)
	}
	for i, item := range f.Schedules {
		spec, err := kvstore.DecodeSpec(item)
		if err != nil {
			return set, entryError(path, i, err)
		}
		set.Schedules[i] = jsstore.StaticSchedule{ID: spec.ID, Spec: spec}
	}
	resolved, err := set.Resolve()
	if err != nil {
		// Resolve's message starts with the source: name the file instead.
		msg := strings.TrimPrefix(usererr.Message(err), set.Source+": ")
		return set, &fieldcheck.UserError{Kind: kvstore.ErrInvalid, Err: err, Msg: "--schedules " + path + ": " + msg}
	}
	return resolved, nil
}

// yamlToJSON converts a YAML document to JSON, for the strict JSON
// decoding of specs. YAML 1.2 (go.yaml.in/yaml/v3): only true and false
// are booleans, so an id "y" or "no" stays a string; a key given twice is
// an error.
func yamlToJSON(data []byte) ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	doc, err := jsonValue(doc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// jsonValue makes a decoded YAML value marshal as JSON: mappings need
// string keys.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[k] = j
		}
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("mapping key %v is not a string (quote it)", k)
			}
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[ks] = j
		}
		return out, nil
	case []any:
		for i, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[i] = j
		}
	}
	return v, nil
}

// LoadAll loads several files and checks that no source label and no
// schedule id comes in two of them.
func LoadAll(paths []string) ([]jsstore.StaticSet, error) {
	sets := make([]jsstore.StaticSet, 0, len(paths))
	sources := map[string]string{}
	ids := map[string]string{}
	for _, p := range paths {
		set, err := Load(p)
		if err != nil {
			return nil, err
		}
		if other, dup := sources[set.Source]; dup {
			return nil, fileError(p, fmt.Errorf("source %q is %s's already; give each file its own source", set.Source, other))
		}
		sources[set.Source] = p
		for _, s := range set.Schedules {
			if other, dup := ids[s.ID]; dup {
				return nil, fileError(p, fmt.Errorf("schedule %q is declared in %s too; one file owns a schedule", s.ID, other))
			}
			ids[s.ID] = p
		}
		sets = append(sets, set)
	}
	return sets, nil
}

func fileError(path string, err error) error {
	return &fieldcheck.UserError{Kind: kvstore.ErrInvalid, Err: err, Msg: "--schedules " + path + ": " + usererr.Message(err)}
}

func entryError(path string, i int, err error) error {
	return &fieldcheck.UserError{Kind: kvstore.ErrInvalid, Err: err, Msg: fmt.Sprintf("--schedules %s: entry %d: %s", path, i+1, usererr.Message(err))}
}
