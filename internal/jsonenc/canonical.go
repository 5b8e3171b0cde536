package jsonenc

import (
	"bytes"
	"encoding/json"
)

// Canonical re-encodes a JSON value with object keys sorted, numbers
// kept exactly as written and no insignificant space, so that equal values
// compare and hash alike. Empty input gives nil.
func Canonical(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(tree) // maps marshal with sorted keys
}
