package fieldcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// MaxIDLen bounds schedule ids, workflow names, calendar names and static
// source labels (kvstore.MaxIDLen).
const MaxIDLen = 128

// Token checks a name that is a KV key and a subject token (a schedule
// id, a workflow, a calendar name): 1 to MaxIDLen bytes of letters,
// digits, '-', '_' and '='. Errors are *FieldError naming field.
func Token(field, s string) error {
	if s == "" {
		return New(field, "", "must not be empty")
	}
	if len(s) > MaxIDLen {
		return New(field, s[:16]+"…", fmt.Sprintf("longer than %d bytes", MaxIDLen))
	}
	for i, r := range s {
		if !tokenRune(r) {
			return New(field, s, fmt.Sprintf("character %q at byte %d is not allowed (use letters, digits, '-', '_', '=')", r, i))
		}
	}
	return nil
}

func tokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '='
}

// Source checks a static source label (a spec's static field): 1 to
// MaxIDLen bytes of printable characters.
func Source(label string) error {
	if label == "" {
		return New("static", "", "must not be empty")
	}
	if len(label) > MaxIDLen {
		return New("static", label[:16]+"…", fmt.Sprintf("longer than %d bytes", MaxIDLen))
	}
	for _, r := range label {
		if !unicode.IsPrint(r) {
			return New("static", label, fmt.Sprintf("character %q is not printable", r))
		}
	}
	return nil
}

// ConditionKey splits a condition key "BUCKET/KEY" (a KV bucket and a key
// in it, which may itself hold '/') and checks both names as NATS KV
// does: a bucket of letters, digits, '-' and '_'; a key of those and '/',
// '=' and '.', not starting or ending with '.'.
func ConditionKey(s string) (bucket, key string, err error) {
	bucket, key, ok := strings.Cut(s, "/")
	switch {
	case !ok || bucket == "" || key == "":
		return "", "", errors.New(`want BUCKET/KEY, a KV bucket and a key in it`)
	case !kvName(bucket, ""):
		return "", "", fmt.Errorf("bucket %q: want letters, digits, '-' and '_'", bucket)
	case !kvName(key, "/=.") || key[0] == '.' || key[len(key)-1] == '.':
		return "", "", fmt.Errorf("key %q: want letters, digits and '-', '_', '/', '=', '.' (not at either end)", key)
	}
	return bucket, key, nil
}

// ConditionBuckets checks the configured condition buckets: KV bucket
// names, each given once, none of them the scheduler's own (a name
// starting "sched_", or the layout's prefix and '_', as sched_wakeups and
// sched_audit_head do). Errors name the flag, condition-buckets.
func ConditionBuckets(names []string, prefix string) error {
	own := []string{"sched_", prefix + "_"}
	for i, b := range names {
		switch {
		case b == "" || !kvName(b, ""):
			return New("condition-buckets", b, "a KV bucket name has letters, digits, '-' and '_' only")
		case slices.Contains(names[:i], b):
			return New("condition-buckets", b, "given twice")
		case strings.HasPrefix(b, own[0]) || strings.HasPrefix(b, own[1]):
			return New("condition-buckets", b, "is the scheduler's own bucket (its records, ledger or audit trail), never a condition bucket")
		}
	}
	return nil
}

// kvName reports whether s holds letters, digits, '-', '_' and the bytes
// of extra only.
func kvName(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// BuiltinPrefix starts the names of the calendars shipped in the binary
// (package calendars): "builtin:uk-england".
const BuiltinPrefix = "builtin:"

// CalendarRef checks a calendar name to read: a stored calendar's (a
// Token) or a shipped one's (BuiltinPrefix and a Token).
func CalendarRef(field, s string) error {
	if rest, ok := strings.CutPrefix(s, BuiltinPrefix); ok {
		if err := Token(field, rest); err != nil {
			return New(field, s, "want "+BuiltinPrefix+"NAME with NAME of letters, digits, '-', '_', '='")
		}
		return nil
	}
	return Token(field, s)
}
