package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeGoExamplesAreExampleTests: every ```go block of the README
// appears, line for line, in an example_readme_test.go of pkg/, where an
// Example test compiles and runs it; so the README's Go cannot drift from
// code that builds and handles its errors.
func TestReadmeGoExamplesAreExampleTests(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "pkg", "*", "example_readme_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example_readme_test.go under pkg/: %v", err)
	}
	var sources [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, codeLines(string(b)))
	}
	blocks := 0
	for block := range strings.SplitSeq(string(readme), "```go\n") {
		if blocks++; blocks == 1 {
			continue // the text before the first block
		}
		code, _, _ := strings.Cut(block, "```")
		want := codeLines(code)
		if !slices.ContainsFunc(sources, func(src []string) bool { return containsRun(src, want) }) {
			t.Errorf("README Go block %d is in no pkg/*/example_readme_test.go:\n%s", blocks-1, code)
		}
	}
	if blocks < 2 {
		t.Fatal("the README has no Go block")
	}
}

// codeLines are s's non-blank lines, trimmed.
func codeLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// containsRun reports whether want appears in src as consecutive lines.
func containsRun(src, want []string) bool {
	for i := 0; i+len(want) <= len(src); i++ {
		if slices.Equal(src[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
