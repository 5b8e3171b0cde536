// Package strictjson refuses JSON documents that name a key twice in one
// object. encoding/json keeps the last of duplicate keys without a word, so
// `{"id":"a","id":"b"}` would silently act on "b"; jetsched's API requests,
// specs and calendars are checked with Check before they are decoded.
package strictjson

import (
	"encoding/json"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting Check follows; deeper documents are left to
// the decoder, which refuses them (encoding/json stops at 10,000 levels).
const maxDepth = 10_000

// DuplicateKeyError reports a key that appears twice in one object.
type DuplicateKeyError struct {
	// Path is the JSON path of the object that holds the key: "" for the
	// top level, "spec.input" or "holidays[2]" below it.
	Path string
	// Key is the repeated key, unescaped.
	Key string
}

func (e *DuplicateKeyError) Error() string {
	if e.Path == "" {
		return "duplicate key " + strconv.Quote(e.Key)
	}
	return "duplicate key " + strconv.Quote(e.Key) + " in " + e.Path
}

// Field is the top-level member the duplicate is in (the key itself when
// it is a top-level key): the field an API error names.
func (e *DuplicateKeyError) Field() string {
	if e.Path == "" {
		return e.Key
	}
	if i := strings.IndexAny(e.Path, ".["); i >= 0 {
		return e.Path[:i]
	}
	return e.Path
}

// Check returns a *DuplicateKeyError for the first key that appears twice
// in one object of data, at any depth, and nil otherwise. Keys are
// compared after unescaping, so "a" and "\u0061" are the same key, and
// case-sensitively, as JSON defines them. Check does not report syntax
// errors: for malformed data it returns nil (or a duplicate it met before
// the fault) and leaves the verdict to the decoder that reads data next.
func Check(data []byte) error {
	s := scanner{data: data}
	s.skipSpace()
	err := s.value(0)
	if err == nil {
		return nil
	}
	if dup, ok := err.(*DuplicateKeyError); ok {
		return dup
	}
	return nil // malformed: the decoder says why
}

// scanner walks well-formed JSON; it gives up (errMalformed) at anything
// else.
type scanner struct {
	data []byte
	pos  int
}

type malformed struct{}

func (malformed) Error() string { return "malformed JSON" }

var errMalformed error = malformed{}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value starting at s.pos (spaces skipped).
func (s *scanner) value(depth int) error {
	if s.pos >= len(s.data) || depth > maxDepth {
		return errMalformed
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		_, _, err := s.str()
		return err
	default:
		// A number, true, false or null: up to the next delimiter.
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.pos == start {
					return errMalformed
				}
				return nil
			}
			s.pos++
		}
		return nil
	}
}

// str scans a string and returns its raw contents (between the quotes) and
// whether it holds escapes.
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	s.pos++ // opening quote
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			escaped = true
			s.pos += 2
			continue
		case '"':
			raw = s.data[start:s.pos]
			s.pos++
			return raw, escaped, nil
		}
		s.pos++
	}
	return nil, false, errMalformed
}

// smallObject is how many keys an object may have before duplicates are
// looked up in a map instead of by comparing with each earlier key.
const smallObject = 16

func (s *scanner) object(depth int) error {
	s.pos++ // {
	var small [smallObject][]byte
	keys := small[:0]
	var many map[string]struct{}
	for n := 0; ; n++ {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errMalformed
		}
		if s.data[s.pos] == '}' && n == 0 {
			s.pos++
			return nil
		}
		if s.data[s.pos] != '"' {
			return errMalformed
		}
		raw, escaped, err := s.str()
		if err != nil {
			return err
		}
		key := raw
		if escaped {
			var k string
			if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k); err != nil {
				return errMalformed
			}
			key = []byte(k)
		}
		if seen(keys, many, key) {
			return &DuplicateKeyError{Key: string(key)}
		}
		if many == nil && len(keys) < smallObject {
			keys = append(keys, key)
		} else {
			if many == nil {
				many = make(map[string]struct{}, 2*smallObject)
				for _, k := range keys {
					many[string(k)] = struct{}{}
				}
			}
			many[string(key)] = struct{}{}
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errMalformed
		}
		s.pos++
		s.skipSpace()
		if err := s.value(depth + 1); err != nil {
			return within(err, string(key), false)
		}
		if end, err := s.after('}'); end || err != nil {
			return err
		}
	}
}

// after reads what follows a member or element: a comma (more follow) or
// the closing delimiter (end).
func (s *scanner) after(closing byte) (end bool, err error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return false, errMalformed
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, errMalformed
}

func seen(keys [][]byte, many map[string]struct{}, key []byte) bool {
	if many != nil {
		_, ok := many[string(key)]
		return ok
	}
	for _, k := range keys {
		if string(k) == string(key) {
			return true
		}
	}
	return false
}

func (s *scanner) array(depth int) error {
	s.pos++ // [
	for i := 0; ; i++ {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errMalformed
		}
		if s.data[s.pos] == ']' && i == 0 {
			s.pos++
			return nil
		}
		if err := s.value(depth + 1); err != nil {
			return within(err, strconv.Itoa(i), true)
		}
		if end, err := s.after(']'); end || err != nil {
			return err
		}
	}
}

// within prefixes a duplicate's path with the member or index it was
// found under.
func within(err error, step string, index bool) error {
	dup, ok := err.(*DuplicateKeyError)
	if !ok {
		return err
	}
	switch {
	case index:
		step = "[" + step + "]"
	case dup.Path != "" && dup.Path[0] != '[':
		step += "."
	}
	dup.Path = step + dup.Path
	return dup
}

// Depth returns the deepest nesting of objects and arrays in data: 0 for
// a scalar, 1 for `{"a":1}` or `[1]`, 2 for `{"a":[1]}`. Brackets inside
// strings do not count. It reads data once and allocates nothing; it does
// not check syntax (for malformed data it returns the depth of the
// brackets it saw), so callers check validity apart.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
