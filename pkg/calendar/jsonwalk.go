package calendar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The decoder below walks the JSON form by hand instead of unmarshalling
// into structs: encoding/json matches field names case-insensitively and
// keeps the last of duplicate fields, and neither is acceptable for a
// documented contract. Every error carries the JSON path of its value.

// member is one name/value pair of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// joinPath appends an object key to a JSON path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends an array index to a JSON path.
func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// kindOf names the JSON kind of a raw value by its first byte.
func kindOf(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// text is the raw value for error messages, shortened.
func text(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// objectMembers splits a JSON object (already known to be well-formed) into
// its members, refusing duplicate names.
func objectMembers(raw json.RawMessage, path string) ([]member, error) {
	if kindOf(raw) != '{' {
		return nil, fieldError(path, text(raw), "want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, &Error{Field: path, Reason: err.Error(), Err: err}
	}
	var out []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &Error{Field: path, Reason: err.Error(), Err: err}
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fieldError(path, fmt.Sprint(tok), "want an object key")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, &Error{Field: joinPath(path, key), Reason: err.Error(), Err: err}
		}
		if seen[key] {
			return nil, fieldError(joinPath(path, key), "", "duplicate field")
		}
		seen[key] = true
		out = append(out, member{key, val})
	}
	return out, nil
}

// arrayElems splits a JSON array (already known to be well-formed).
func arrayElems(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if kindOf(raw) != '[' {
		return nil, fieldError(path, text(raw), "want a JSON array")
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, &Error{Field: path, Reason: err.Error(), Err: err}
	}
	return out, nil
}

// decodeString reads a JSON string.
func decodeString(raw json.RawMessage, path string) (string, error) {
	if kindOf(raw) != '"' {
		return "", fieldError(path, text(raw), "want a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &Error{Field: path, Value: text(raw), Reason: "want a string", Err: err}
	}
	return s, nil
}

// decodeInt reads a JSON integer.
func decodeInt(raw json.RawMessage, path string) (int, error) {
	if k := kindOf(raw); k != '-' && (k < '0' || k > '9') {
		return 0, fieldError(path, text(raw), "want an integer")
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, &Error{Field: path, Value: text(raw), Reason: "want an integer", Err: err}
	}
	return n, nil
}
