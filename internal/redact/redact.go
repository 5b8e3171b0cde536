// Package redact hides secrets in what jetsched prints: passwords and
// tokens in NATS URLs, in the messages that carry them. It is a leaf (no
// NATS client), so that every package that names a server can use it.
package redact

import (
	"cmp"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret in what jetsched prints: a password or token
// in a NATS URL, a --password, the contents of a credentials or seed.
const Redacted = "<redacted>"

// URL is a NATS URL, or a comma-separated list of them, as it may be
// printed: in each URL (with or without a scheme) a password
// ("nats://user:PASSWORD@host") or a token ("nats://TOKEN@host") is
// Redacted, as is everything after a '?' or '#' (a query such as
// "?password=..."); the
// scheme, the user name, the host and port and the path stay. What cannot
// be told apart from a secret is redacted too (fail closed): a host part
// that does not look like host[:port], everything after the scheme when an
// '@' may sit in the query, and the URL before a comma that may be inside
// a password ("u:pa,ss@h"). Every message, log line and printed setting
// that carries a URL goes through it.
func URL(s string) string {
	var b strings.Builder
	inSecret := false
	for _, p := range urlPieces(s) {
		switch {
		case !p.secret && p.text == "":
			continue // nothing between two secrets: still one
		case !p.secret:
			b.WriteString(p.text)
		case !inSecret: // one Redacted for secrets side by side
			b.WriteString(Redacted)
		}
		inSecret = p.secret
	}
	return b.String()
}

// urlSecrets are the secret parts of the URLs in s, longest first, each
// also as it reads percent-decoded: what Error hides in a message.
func urlSecrets(s string) []string {
	var out []string
	for _, p := range urlPieces(s) {
		if !p.secret || p.text == "" {
			continue
		}
		out = append(out, p.text)
		if d, err := url.PathUnescape(p.text); err == nil && d != p.text && d != "" {
			out = append(out, d)
		}
		if d, err := url.QueryUnescape(p.text); err == nil && d != p.text && d != "" {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(out)
}

// Error is err with the secrets of urls (as URL finds them)
// replaced by Redacted in its message: nats.go and net/url put the URL
// they were given into their errors ("parse \"nats://u:pw@h:x\": invalid
// port"). The result matches what err matches with errors.Is, but does not
// unwrap to it, so that nothing prints the original message by accident.
// Nil stays nil.
func Error(err error, urls string) error {
	if err == nil {
		return nil
	}
	secrets := urlSecrets(urls)
	msg := err.Error()
	if len(secrets) == 0 {
		return &redactedError{msg: msg, err: err}
	}
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, Redacted)
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message has its secrets redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether the original error matches target.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// piece is a run of a URL list's text, secret or not; the pieces of a
// list, concatenated, are the list.
type piece struct {
	text   string
	secret bool
}

// urlPieces splits a comma-separated list of URLs into pieces.
func urlPieces(s string) []piece {
	parts := strings.Split(s, ",")
	var out []piece
	prev := 0         // index in out of the first piece after the last scheme
	prevOpen := false // the previous URL ended in a query, a fragment or a secret
	for i, u := range parts {
		if i > 0 {
			out = append(out, piece{text: ","})
		}
		ps, sh := onePieces(u)
		scheme := strings.Contains(u, "://")
		switch {
		case prevOpen && !scheme:
			// "?password=a,b": the comma may sit in a secret, and then
			// it and this are the rest of it.
			for j := len(out) - 1; j >= 0 && (j == len(out)-1 || strings.TrimSpace(out[j].text) == ""); j-- {
				out[j].secret = true // the comma, and the spaces before it
			}
			for j := range ps {
				ps[j].secret = ps[j].text != ""
			}
		case sh.hasInfo && !scheme && i > 0:
			// "u:pa,ss@h": a comma may sit in a password, and then what
			// comes before it since the last scheme, the comma and what
			// precedes the '@' are a user and that password.
			for j := prev; j < len(out); j++ {
				out[j].secret = true
			}
			for j := range sh.atAt {
				ps[j].secret = true
			}
		}
		if scheme {
			prev = len(out) + sh.afterScheme
		}
		prevOpen = sh.open || (prevOpen && !scheme)
		out = append(out, ps...)
	}
	return out
}

// shape is what urlPieces needs to know of one URL's pieces.
type shape struct {
	hostAt      int  // index of the host piece (-1: none)
	afterScheme int  // index of the first piece after the scheme
	hasInfo     bool // it has an '@'
	atAt        int  // with hasInfo, the index of the '@' piece (or of the secret that holds it)
	open        bool // it ends in a query, a fragment or a secret
}

// onePieces splits one URL into pieces.
func onePieces(u string) (out []piece, sh shape) {
	sh.hostAt = -1
	trimmed := strings.TrimLeft(u, " \t")
	if lead := len(u) - len(trimmed); lead > 0 {
		out = append(out, piece{text: u[:lead]})
	}
	rest := strings.TrimRight(trimmed, " \t")
	trail := trimmed[len(rest):]
	if i := strings.Index(rest, "://"); i > 0 && validScheme(rest[:i]) {
		out = append(out, piece{text: rest[:i+3]})
		rest = rest[i+3:]
	}
	sh.afterScheme = len(out)
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		sh.hasInfo = true
		info := rest[:at]
		if strings.ContainsAny(info, "?#") {
			// The '@' may be in the query or fragment: no telling what is
			// what.
			sh.atAt, sh.open = len(out), true
			out = append(out, piece{text: rest, secret: true})
			return appendTrail(out, trail), sh
		}
		if user, pass, ok := strings.Cut(info, ":"); ok {
			out = append(out, piece{text: user + ":"}, piece{text: pass, secret: pass != ""})
		} else {
			out = append(out, piece{text: info, secret: info != ""}) // a token
		}
		sh.atAt = len(out)
		out = append(out, piece{text: "@"})
		rest = rest[at+1:]
	}
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	sh.hostAt = len(out)
	out = append(out, piece{text: rest[:end], secret: !validHostPort(rest[:end])})
	rest = rest[end:]
	// The path, shown.
	if i := strings.IndexAny(rest, "?#"); i > 0 {
		out = append(out, piece{text: rest[:i]})
		rest = rest[i:]
	} else if i < 0 {
		out = append(out, piece{text: rest})
		rest = ""
	}
	sh.open = out[len(out)-1].secret // a host that may be part of a secret
	if rest != "" {
		// The query and fragment, whole: "?password=pa&ss#x" has no
		// telling where a value ends.
		out = append(out, piece{text: rest[:1]}, piece{text: rest[1:], secret: len(rest) > 1})
		sh.open = true
	}
	return appendTrail(out, trail), sh
}

func appendTrail(out []piece, trail string) []piece {
	if trail != "" {
		out = append(out, piece{text: trail})
	}
	return out
}

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' and '.'.
func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// validHostPort reports whether s looks like host, host:port, [v6] or
// [v6]:port (or is empty): what may be printed as a host.
func validHostPort(s string) bool {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return false
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return false
			}
		}
		if strings.Trim(host, "0123456789abcdefABCDEF:.%") != "" {
			return false
		}
	} else {
		if i := strings.LastIndex(s, ":"); i >= 0 {
			host, port = s[:i], s[i+1:]
		}
		for _, r := range host {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
				return false
			}
		}
	}
	if len(port) > 5 {
		return false
	}
	for _, r := range port {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
