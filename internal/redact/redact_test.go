package redact

import (
	"strings"
	"testing"
)

// redactCases are URL lists and how they print: secrets redacted, the rest
// kept; what cannot be told from a secret redacted too.
var redactCases = []struct{ in, want string }{
	{"", ""},
	{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
	{"nats://user:PASSWORD@host:4222", "nats://user:<redacted>@host:4222"},
	{"u:PW@h:4222", "u:<redacted>@h:4222"},                           // no scheme
	{"nats://TOKEN@host:4222", "nats://<redacted>@host:4222"},        // a token
	{"TOKEN@host", "<redacted>@host"},                                // a token, no scheme
	{"nats://user:@host", "nats://user:@host"},                       // an empty password
	{"nats://u:p@ss@host", "nats://u:<redacted>@host"},               // an '@' in the password
	{"nats://u:pa/ss@host", "nats://u:<redacted>@host"},              // a '/' in it
	{"nats://u:pa%40ss@host", "nats://u:<redacted>@host"},            // escaped
	{"tls://u:pw@[::1]:4222", "tls://u:<redacted>@[::1]:4222"},       // IPv6
	{"ws://u:pw@host:8080/path", "ws://u:<redacted>@host:8080/path"}, // a path
	{"nats://host:4222?password=PW&user=u", "nats://host:4222?<redacted>"},
	{"nats://host?token", "nats://host?<redacted>"},
	{"nats://host#frag", "nats://host#<redacted>"},
	{"nats://host?password=pa#", "nats://host?<redacted>"},
	{"nats://host:4222?x=a@b", "nats://<redacted>"}, // an '@' in the query: no telling
	{"nats://u:p?w@host", "nats://<redacted>"},      // a '?' in a password: the same
	{"nats://u:pw@n1:4222, nats://TOK@n2:4222 ,nats://n3:4222", "nats://u:<redacted>@n1:4222, nats://<redacted>@n2:4222 ,nats://n3:4222"},
	{"nats://a:1,b:2", "nats://a:1,b:2"},
	{"nats://u:pa,ss@host", "nats://<redacted>@host"}, // a comma in a password
	{"nats://u:12,34@host", "nats://<redacted>@host"},
	{"nats://u:12/x,34@host", "nats://<redacted>@host"},
	{"nats://h:notaport", "nats://<redacted>"}, // not a host: hidden
	{"nats://ho st:4222", "nats://<redacted>"},
}

// TestURL: the table above.
func TestURL(t *testing.T) {
	for _, c := range redactCases {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzURL: a password or token, whatever its bytes, never shows in
// the redacted URL (unless the rest of the URL holds it anyway), and
// redacting is idempotent.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"PASSWORD", "p@ss", "a,b", "x?y=z@w", "pa/ss", "%40", ":", "12,34", "a b"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, secret string, scheme bool) {
		// Spaces around a URL are not part of it (nats.go trims them).
		if secret == "" || strings.Contains(secret, "\x00") || strings.TrimSpace(secret) != secret {
			return
		}
		prefix := ""
		if scheme {
			prefix = "nats://"
		}
		for _, tmpl := range []string{"%suser:%s@host:4222", "%s%s@host:4222", "%shost:4222?password=%s", "%su:%s@n1:4222,nats://n2:4222"} {
			switch {
			case strings.HasPrefix(tmpl, "%s%s@") && strings.Contains(secret, ":"):
				continue // "a:b@h" is a user and a password, not a token
			case !scheme && strings.HasPrefix(tmpl, "%su") && strings.HasPrefix(secret, "//"):
				continue // "user://@h" is a scheme
			}
			in := strings.Replace(strings.Replace(tmpl, "%s", prefix, 1), "%s", secret, 1)
			shape := strings.Replace(strings.Replace(tmpl, "%s", prefix, 1), "%s", "", 1)
			out := URL(in)
			// Each Redacted as one byte the secret does not hold.
			if strings.Contains(strings.ReplaceAll(out, Redacted, "\x00"), secret) && !strings.Contains(shape, secret) {
				t.Fatalf("URL(%q) = %q shows the secret %q", in, out, secret)
			}
			if again := URL(out); again != out {
				t.Fatalf("URL not idempotent on %q: %q, then %q", in, out, again)
			}
		}
	})
}
