package kvstore_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// keysTokenRE is the alphabet of an escaped id: one KV key token, no '.'.
var keysTokenRE = regexp.MustCompile(`^[-_=a-zA-Z0-9]+$`)

// keysNATSKeyRE is what a JetStream KV key may hold (nats.go's rule).
var keysNATSKeyRE = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// keysIDs are ids with every character that a naive key would mishandle.
var keysIDs = []string{
	"run-1", "step_2", "ABCxyz019", "a.b", "a..b", ".", "..", ".leading", "trailing.",
	"a/b", "/", "path/to/step", "a b", " ", "  two  spaces ", "tab\there", "new\nline",
	"é", "naïve café", "日本語", "Ωμέγα", "=", "==", "=3D", "a=b", "%", "%2E", "100%",
	"*", ">", "a.*", "a.>", "run.*.>", "😀", "👩‍💻 dev", "\x00", "\u00a0", "\u200b",
	"a\\b", `"quoted"`, "'", "$KV.x", "-", "_", "--", "\uFFFD",
}

func TestEscapeExamples(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"abc-XYZ_09", "abc-XYZ_09"},
		{"a.b", "a=2Eb"},
		{"é", "=C3=A9"},
		{"=", "=3D"},
		{"a/b c", "a=2Fb=20c"},
		{"*>", "=2A=3E"},
		{"%", "=25"},
		{"😀", "=F0=9F=98=80"},
		{"", ""},
	} {
		if got := kvstore.EscapeTimerID(c.id); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.id, got, c.want)
		}
		back, err := kvstore.UnescapeTimerID(c.want)
		if err != nil || back != c.id {
			t.Errorf("Unescape(%q) = %q, %v, want %q", c.want, back, err, c.id)
		}
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, id := range keysIDs {
		tok := kvstore.EscapeTimerID(id)
		if !keysTokenRE.MatchString(tok) {
			t.Errorf("Escape(%q) = %q: not a single key token", id, tok)
		}
		back, err := kvstore.UnescapeTimerID(tok)
		if err != nil || back != id {
			t.Errorf("Unescape(Escape(%q)) = %q, %v", id, back, err)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, run := range keysIDs {
		for _, step := range []string{"s", "a.b", "é", "=", "*", ">", "x/y z", "😀"} {
			key := kvstore.TimerKey(run, step)
			if !keysNATSKeyRE.MatchString(key) || strings.Count(key, ".") != 1 {
				t.Errorf("Key(%q, %q) = %q: want exactly two key tokens", run, step, key)
			}
			r, s, err := kvstore.SplitTimerKey(key)
			if err != nil || r != run || s != step {
				t.Errorf("SplitKey(%q) = %q, %q, %v; want %q, %q", key, r, s, err, run, step)
			}
		}
	}
}

// keysRandomID draws an id mixing plain characters, the characters with a
// meaning in keys and subjects, multi-byte runes and stray bytes.
func keysRandomID(r *rand.Rand) string {
	const pieces = "aZ09-_.=/ *>%\\"
	runes := []string{"é", "日", "😀", "\u200b", "=2E", "=3D", ".", "a.b"}
	var b strings.Builder
	for n := 1 + r.IntN(8); n > 0; n-- {
		switch r.IntN(4) {
		case 0, 1:
			b.WriteByte(pieces[r.IntN(len(pieces))])
		case 2:
			b.WriteString(runes[r.IntN(len(runes))])
		default:
			b.WriteByte(byte(r.IntN(256)))
		}
	}
	return b.String()
}

// Distinct (run, step) pairs give distinct keys, and each key splits back
// to its pair.
func TestKeyDistinctProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type pair struct{ run, step string }
	seen := make(map[string]pair)
	tokens := make(map[string]string)
	for range 50000 {
		p := pair{keysRandomID(r), keysRandomID(r)}
		key := kvstore.TimerKey(p.run, p.step)
		if q, ok := seen[key]; ok && q != p {
			t.Fatalf("Key(%q, %q) = Key(%q, %q) = %q", p.run, p.step, q.run, q.step, key)
		}
		seen[key] = p
		for _, id := range []string{p.run, p.step} {
			tok := kvstore.EscapeTimerID(id)
			if other, ok := tokens[tok]; ok && other != id {
				t.Fatalf("Escape(%q) = Escape(%q) = %q", id, other, tok)
			}
			tokens[tok] = id
		}
		run, step, err := kvstore.SplitTimerKey(key)
		if err != nil || run != p.run || step != p.step {
			t.Fatalf("SplitKey(%q) = %q, %q, %v; want %q, %q", key, run, step, err, p.run, p.step)
		}
	}
	// The pairs a plain "<run>.<step>" join would confuse.
	if kvstore.TimerKey("a.b", "c") == kvstore.TimerKey("a", "b.c") {
		t.Error(`Key("a.b", "c") == Key("a", "b.c")`)
	}
}

func TestEscapeUnescapeErrors(t *testing.T) {
	for _, tok := range []string{
		"=", "a=", "=4", "=G0", "=2e", "=zz", // malformed escapes
		"=41", "=2D", "=5F", "=30", // escapes of bytes Escape keeps
		"a.b", "a b", "é", "*", ">", "/", "%41",
	} {
		if got, err := kvstore.UnescapeTimerID(tok); err == nil {
			t.Errorf("Unescape(%q) = %q, want an error", tok, got)
		}
	}
}

func TestSplitKeyErrors(t *testing.T) {
	for _, key := range []string{"", "a", ".", "a.", ".b", "a.b.c", "a..b", "a.=ZZ", "=ZZ.b", "a b.c", "a.*"} {
		if run, step, err := kvstore.SplitTimerKey(key); err == nil {
			t.Errorf("SplitKey(%q) = %q, %q, want an error", key, run, step)
		}
	}
}

// keysSubjectMatch is NATS subject matching: '*' is one token, '>' the
// rest.
func keysSubjectMatch(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(f) == len(s)
}

func TestKeyRunFilter(t *testing.T) {
	if got := kvstore.TimerRunFilter("a.b"); got != "a=2Eb.*" {
		t.Errorf(`RunFilter("a.b") = %q, want "a=2Eb.*"`, got)
	}
	runs := []string{"a", "a.b", "a.*", "a.>", "*", ">", "a b", "é", "a=2Eb"}
	for _, run := range runs {
		filter := kvstore.TimerRunFilter(run)
		for _, other := range runs {
			for _, step := range []string{"s", "x.y", "*"} {
				key := kvstore.TimerKey(other, step)
				if got := keysSubjectMatch(filter, key); got != (run == other) {
					t.Errorf("filter %q (run %q) matches key %q (run %q): %v", filter, run, key, other, got)
				}
			}
		}
	}
}

func TestKeyValidateID(t *testing.T) {
	for _, id := range []string{"x", "a.b", "日本語", "😀", "wait for payment", "invoice/2026-11", "(a)+[b]=c,d;e:f@g#h~i!j$k%l&m'n",
		strings.Repeat("a", kvstore.MaxTimerIDLen), strings.Repeat("é", kvstore.MaxTimerIDLen/2)} {
		if err := fieldcheck.TimerID("run", id); err != nil {
			t.Errorf("ValidateID(run, %q) = %v, want nil", id, err)
		}
	}
	for _, c := range []struct{ field, id, want string }{
		{"run", "", `wakeup: run "": must not be empty`},
		{"step", "", `wakeup: step "": must not be empty`},
		{"run", strings.Repeat("a", kvstore.MaxTimerIDLen+1), `wakeup: run "` + strings.Repeat("a", 32) + `…": longer than 256 bytes`},
		{"step", strings.Repeat("é", kvstore.MaxTimerIDLen/2) + "x", "wakeup: step \"" + strings.Repeat("é", 16) + "…\": longer than 256 bytes"},
		{"step", "a\xffb", `wakeup: step "a\xffb": not valid UTF-8`},
		// Each of these would be read as something else in a header, a
		// subject or a log line.
		{"run", "a\x00b", `wakeup: run "a\x00b": character '\x00' at byte 1 is not allowed`},
		{"run", "a\r\nSched-Run: b", `wakeup: run "a\r\nSched-Run: b": character '\r' at byte 1 is not allowed`},
		{"step", "a\nb", `wakeup: step "a\nb": character '\n' at byte 1 is not allowed`},
		{"step", "a*", `wakeup: step "a*": character '*' at byte 1 is not allowed`},
		{"run", ">", `wakeup: run ">": character '>' at byte 0 is not allowed`},
		{"run", "a\tb", `wakeup: run "a\tb": character '\t' at byte 1 is not allowed`},
		{"run", "a\u00a0b", `wakeup: run "a\u00a0b": character '\u00a0' at byte 1 is not allowed`},
		{"run", "a\u202eb", `wakeup: run "a\u202eb": character '\u202e' at byte 1 is not allowed`},
		{"run", "a\"b", `wakeup: run "a\"b": character '"' at byte 1 is not allowed`},
		{"run", " a", `wakeup: run " a": a space at either end is not allowed`},
		{"step", "a ", `wakeup: step "a ": a space at either end is not allowed`},
	} {
		err := fieldcheck.TimerID(c.field, c.id)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ValidateID(%q, %q) = %v, want %s", c.field, c.id, err, c.want)
		}
	}
}

// FuzzEscape checks that Escape round-trips every string into one key
// token, and that Unescape never panics and accepts only Escape's output.
func FuzzEscape(f *testing.F) {
	for _, id := range keysIDs {
		f.Add(id)
	}
	for _, tok := range []string{"=", "=2", "=2e", "=41", "a=2Eb", "=C3=A9", "=FF"} {
		f.Add(tok)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := kvstore.EscapeTimerID(s)
		if s != "" && !keysTokenRE.MatchString(tok) {
			t.Fatalf("Escape(%q) = %q: not a single key token", s, tok)
		}
		back, err := kvstore.UnescapeTimerID(tok)
		if err != nil || back != s {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", s, back, err)
		}
		if s != "" {
			run, step, err := kvstore.SplitTimerKey(kvstore.TimerKey(s, s))
			if err != nil || run != s || step != s {
				t.Fatalf("SplitKey(Key(%q, %q)) = %q, %q, %v", s, s, run, step, err)
			}
		}
		if id, err := kvstore.UnescapeTimerID(s); err == nil && kvstore.EscapeTimerID(id) != s {
			t.Fatalf("Unescape(%q) = %q, which escapes to %q", s, id, kvstore.EscapeTimerID(id))
		}
		if fieldcheck.TimerID("run", s) == nil && (s == "" || !utf8.ValidString(s) || len(s) > kvstore.MaxTimerIDLen) {
			t.Fatalf("ValidateID(run, %q) accepted an invalid id", s)
		}
	})
}

func ExampleTimerKey() {
	key := kvstore.TimerKey("order.42", "wait for payment")
	fmt.Println(key)
	run, step, err := kvstore.SplitTimerKey(key)
	fmt.Printf("%q %q %v\n", run, step, err)
	fmt.Println(kvstore.TimerRunFilter("order.42"))
	// Output:
	// order=2E42.wait=20for=20payment
	// "order.42" "wait for payment" <nil>
	// order=2E42.*
}
