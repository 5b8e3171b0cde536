package textcut_test

import (
	"testing"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/textcut"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 10, "…", "short"},
		{"exactly10!", 10, "…", "exactly10!"},
		{"abcdefghijk", 10, "…", "abcdefg…"},
		{"ééééé", 5, "", "éé"},
		{"abcdef", 2, "...", "ab..."},
	} {
		got := textcut.Cut(tc.s, tc.n, tc.mark)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d, %q) = %q, want %q", tc.s, tc.n, tc.mark, got, tc.want)
		}
	}
}
