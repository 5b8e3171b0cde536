package fieldcheck

import (
	"fmt"
	"strconv"
)

// The caps on a record's labels (docs/records.md states them).
const (
	// MaxLabels is the most labels one record carries.
	MaxLabels = 32
	// MaxLabelKeyLen bounds a label's key, in bytes.
	MaxLabelKeyLen = 128
	// MaxLabelValueLen bounds a label's value, in bytes.
	MaxLabelValueLen = 128
)

// Labels checks the labels of a spec or a timer: at most MaxLabels, each
// key a LabelKey and each value a LabelValue. Errors are *FieldError
// naming "labels.<key>" (or "labels" for the count, or a key that cannot
// be printed as a field name).
func Labels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return New("labels", "", fmt.Sprintf("%d labels, over the maximum of %d", len(labels), MaxLabels))
	}
	for k, v := range labels {
		if err := LabelKey(k); err != nil {
			return err
		}
		if err := LabelValue(k, v); err != nil {
			return err
		}
	}
	return nil
}

// LabelKey checks a label's key: 1 to MaxLabelKeyLen bytes of letters,
// digits, '-', '_', '.' and '/', starting and ending with a letter or a
// digit ("team", "tier", "example.com/owner"). The error names
// "labels.<key>".
func LabelKey(k string) error {
	switch {
	case k == "":
		return New("labels", "", "a label key must not be empty")
	case len(k) > MaxLabelKeyLen:
		return New(labelField(k[:16])+"…", "", fmt.Sprintf("key longer than %d bytes", MaxLabelKeyLen))
	}
	if i, c := badLabelByte(k, true); i >= 0 {
		return New(labelField(k), "", fmt.Sprintf("character %q at byte %d is not allowed in a key (use letters, digits, '-', '_', '.', '/'; a letter or digit first and last)", c, i))
	}
	return nil
}

// LabelValue checks the value of label k: empty, or 1 to
// MaxLabelValueLen bytes of letters, digits, '-', '_' and '.', starting
// and ending with a letter or a digit. The error names "labels.<k>".
func LabelValue(k, v string) error {
	if len(v) > MaxLabelValueLen {
		return New(labelField(k), v[:16]+"…", fmt.Sprintf("value longer than %d bytes", MaxLabelValueLen))
	}
	if i, c := badLabelByte(v, false); i >= 0 {
		return New(labelField(k), v, fmt.Sprintf("character %q at byte %d is not allowed in a value (use letters, digits, '-', '_', '.'; a letter or digit first and last)", c, i))
	}
	return nil
}

// labelField is the field name of label k in errors: "labels.<k>", with k
// quoted when it holds what a field name should not (spaces, quotes,
// control or non-ASCII characters).
func labelField(k string) string {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return "labels." + strconv.Quote(k)
		}
	}
	return "labels." + k
}

// badLabelByte returns the first byte of s a label key (key) or value may
// not hold there, and its index; -1 when there is none.
func badLabelByte(s string, key bool) (int, byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		inner := c == '-' || c == '_' || c == '.' || key && c == '/'
		if !alnum && (!inner || i == 0 || i == len(s)-1) {
			return i, c
		}
	}
	return -1, 0
}
