package console

import (
	"net/url"
	"strings"
	"testing"
)

// safeNextCases are where a sign-in may send the browser after it, and
// where it must not: everything but a local path goes to "/".
var safeNextCases = []struct{ in, want string }{
	{"/fleet", "/fleet"},
	{"/schedules/job?month=2026-12", "/schedules/job?month=2026-12"},
	{"/schedules?q=a%20b#top", "/schedules?q=a%20b#top"},
	{"/", "/"},
	{"", "/"},
	{"fleet", "/"},
	{"//evil.example", "/"},
	{"//evil.example/path", "/"},
	{"///evil.example", "/"},
	{"/\\evil.example", "/"},
	{"\\/\\/evil.example", "/"},
	{"\\\\evil.example", "/"},
	{"/\\/evil.example", "/"},
	{"/\t/evil.example", "/"},
	{"/\n/evil.example", "/"},
	{"/\r\n/evil.example", "/"},
	{"/%09/evil.example", "/"},
	{"/%0a/evil.example", "/"},
	{"/%2F/evil.example", "/"},
	{"/%2f%2fevil.example", "/"},
	{"/%5Cevil.example", "/"},
	{"/%5c%5cevil.example", "/"},
	{"/ /evil.example", "/"},
	{"/\x00/evil.example", "/"},
	{"/\x7f/evil.example", "/"},
	{"/\u3000/evil.example", "/"},
	{"https://evil.example", "/"},
	{"http:/evil.example", "/"},
	{"javascript:alert(1)", "/"},
	{"JavaScript:alert(1)", "/"},
	{"data:text/html,<script>alert(1)</script>", "/"},
	{" /fleet", "/"},
	{"\t//evil.example", "/"},
	{"/fleet\t", "/"},
	{"https:evil.example", "/"},
	{"//user@evil.example", "/"},
	{"/" + strings.Repeat("a", 3000), "/"},
}

func TestSafeNext(t *testing.T) {
	for _, c := range safeNextCases {
		if got := safeNext(c.in); got != c.want {
			t.Errorf("safeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSafeNext: whatever comes in, safeNext returns "/" or its input, and
// a browser resolving it against the console's URL, after dropping the
// tabs and newlines it ignores and reading backslashes as slashes, stays
// on the console's host.
func FuzzSafeNext(f *testing.F) {
	for _, c := range safeNextCases {
		f.Add(c.in)
	}
	base, _ := url.Parse("http://console.local:8090/schedules/x")
	f.Fuzz(func(t *testing.T, in string) {
		out := safeNext(in)
		if out != "/" && out != in {
			t.Fatalf("safeNext(%q) = %q: neither / nor the input", in, out)
		}
		browser := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(strings.TrimSpace(out))
		u, err := url.Parse(browser)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q, which does not parse: %v", in, out, err)
		}
		if got := base.ResolveReference(u); got.Scheme != "http" || got.Host != "console.local:8090" || got.User != nil {
			t.Fatalf("safeNext(%q) = %q leads to %s", in, out, got)
		}
		if p, err := url.PathUnescape(u.EscapedPath()); err != nil || strings.HasPrefix(p, "//") || strings.Contains(p, "\\") {
			t.Fatalf("safeNext(%q) = %q: its path decodes to %q", in, out, p)
		}
	})
}
