package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryDocs: every link and backticked path of README.md,
// docs/*.md and bench/results/*.md holds in this repository.
func TestRepositoryDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsEachKind: the checker reports a missing file, a missing
// anchor, a link out of the repository, a backticked path that does not
// exist and a Markdown file named in prose that the repository does not
// have, each at its line, and accepts what holds.
func TestCheckFindsEachKind(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/fires/loop.go", "package fires\n")
	write("bench/results/bench-1-a.json", "{}\n")
	write("bench/results/bench-1-b.json", "{}\n")
	write("docs/records.md", "# Records\n\n## The spec (`Spec`)\n\n## Ended lists\n\n## Ended lists\n")
	write("README.md", strings.Join([]string{
		"# x",
		"[ok](docs/records.md#the-spec-spec) [ok](docs/records.md#ended-lists-1) [ok](https://example.com/x)",
		"[missing](docs/nothing.md)",
		"[bad anchor](docs/records.md#no-such-heading)",
		"[outside](../shared/reference/peers.md)",
		"`internal/fires.Engine` `internal/fires/loop.go:12` `./internal/fires/...` `bench/results/bench-{1..1}-{a,b}.json` `sched.fire.<wf>` (`internal/fires`).",
		"`internal/nothing` and `bench/results/bench-1-{a,c}.json`",
		"`../shared/reference/peer-schedulers.md`",
		"```",
		"pkg/gone/        a package that left",
		"```",
		"[in a block is text](nothing.md) below [the anchor](#x)",
		"The invariant (DESIGN.md, guarantee 10), as records.md and docs/records.md say.",
	}, "\n"))
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:3: docs/nothing.md: no such file in the repository",
		"README.md:4: docs/records.md#no-such-heading: no heading of docs/records.md has the anchor #no-such-heading",
		"README.md:5: ../shared/reference/peers.md: links outside the repository",
		"README.md:7: internal/nothing: no such path in the repository",
		"README.md:7: bench/results/bench-1-{a,c}.json: no such path in the repository",
		"README.md:8: ../shared/reference/peer-schedulers.md: names a path outside the repository",
		"README.md:10: pkg/gone/: no such path in the repository",
		"README.md:12: nothing.md: no such file in the repository",
		"README.md:13: DESIGN.md: names a Markdown file the repository does not have",
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSlug: GitHub's anchors for the headings the docs link to.
func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Issue 26 closed: before and after on the Intel box (6 December, 03:47)": "issue-26-closed-before-and-after-on-the-intel-box-6-december-0347",
		"`--state-interval` on by default":                                       "--state-interval-on-by-default",
		"Leaf nodes and JetStream domains":                                       "leaf-nodes-and-jetstream-domains",
		"A [linked](x.md) heading":                                               "a-linked-heading",
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}
