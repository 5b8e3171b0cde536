package kvstore

import (
	"errors"
	"fmt"
	"strings"
)

// ParseConditionKey splits a condition key "BUCKET/KEY" (a KV bucket and a
// key in it, which may itself hold '/') and checks both names as NATS KV
// does: a bucket of letters, digits, '-' and '_'; a key of those and '/',
// '=' and '.', not starting or ending with '.'.
func ParseConditionKey(s string) (bucket, key string, err error) {
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
