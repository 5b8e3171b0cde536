// Package usererr decides what a person or program reads when jetsched
// refuses something: the admin API's error messages and the CLI's are
// Message's text. The errors themselves (*kvstore.FieldError,
// *fieldcheck.UserError and the sentinels callers branch on) are pkg/kvstore's
// public contract; rendering them is the servers' business, kept here.
package usererr

import (
	"fmt"
	"regexp"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// NotFound is the error for a record that does not exist: kind is what
// the user calls it ("schedule", "calendar", "timer", "slot"), name its
// id. Its text is `not found: schedule "x"`; it matches
// kvstore.ErrNotFound.
func NotFound(kind, name string) error {
	return &fieldcheck.UserError{Kind: kvstore.ErrNotFound, Msg: fmt.Sprintf("not found: %s %q", kind, name)}
}

// Message renders err for users. It is the one place that decides what a
// user reads: the outermost *kvstore.FieldError or *fieldcheck.UserError in
// err's chain says it (a *FieldError names the field and says why), and
// anything else (a NATS failure, say) keeps its detail but loses the
// package prefixes of internal wrapping ("kvstore: ", "fire: ", ...).
func Message(err error) string {
	if err == nil {
		return ""
	}
	if u := outermost(err); u != nil { // the outermost one: it has the most context
		return stripPrefixes(u.Error())
	}
	return stripPrefixes(err.Error())
}

// outermost is the first *kvstore.FieldError or *fieldcheck.UserError in
// err's tree, in the order errors.As visits it (depth first).
func outermost(err error) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *kvstore.FieldError, *fieldcheck.UserError:
		return e
	case interface{ Unwrap() error }:
		return outermost(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if u := outermost(inner); u != nil {
				return u
			}
		}
	}
	return nil
}

// packagePrefix matches the prefix a jetsched package puts on its errors,
// at the start of a message or of a wrapped one.
var packagePrefix = regexp.MustCompile(`(^|: )(kvstore|admin|fire|wakeup|cronx|calendar|audit|client|worker|strictjson|daemon): `)

func stripPrefixes(s string) string {
	for {
		t := packagePrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}
