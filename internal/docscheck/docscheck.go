package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// isRoot reports whether dir is a top-level directory whose paths the
// docs name in backticks: a word of a code span starting with one of them
// is read as a repository path.
func isRoot(dir string) bool {
	switch dir {
	case "bench", "cmd", "deploy", "docs", "integration", "internal", "natsconf", "pkg":
		return true
	}
	return false
}

// Problem is one reference that does not hold: the file and line it is
// on, what it says, and why it is wrong.
type Problem struct {
	File   string // relative to the repository root, slash-separated
	Line   int    // 1-based
	Ref    string // the link target or the path as written
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Ref, p.Reason)
}

// Documents lists the Markdown files Check reads under root: README.md,
// docs/*.md and bench/results/*.md, slash-separated and relative to root.
func Documents(root string) ([]string, error) {
	docs := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "bench/results/*.md"} {
		found, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, fmt.Errorf("glob %s: %w", pattern, err)
		}
		for _, f := range found {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				return nil, fmt.Errorf("document %s: %w", f, err)
			}
			docs = append(docs, filepath.ToSlash(rel))
		}
	}
	return docs, nil
}

// Check reads the documents of root (see Documents) and returns every
// reference that does not hold, in file and line order.
func Check(root string) ([]Problem, error) {
	docs, err := Documents(root)
	if err != nil {
		return nil, err
	}
	c := &checker{root: root, anchors: map[string]map[string]bool{}}
	var problems []Problem
	for _, doc := range docs {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", doc, err)
		}
		ps, err := c.document(doc, string(text))
		if err != nil {
			return nil, err
		}
		problems = append(problems, ps...)
	}
	return problems, nil
}

// checker caches each Markdown file's anchors over one Check.
type checker struct {
	root    string
	anchors map[string]map[string]bool // by slash path relative to root
}

var (
	// linkRE: an inline link or image, [text](target) with an optional title.
	linkRE = regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	// refDefRE: a reference definition, [label]: target.
	refDefRE = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)`)
	// spanRE: an inline code span of one or more backticks.
	spanRE = regexp.MustCompile("(`+)([^`]+?)`+")
	// schemeRE: an absolute URL (http:, https:, mailto:, ...).
	schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// document checks one Markdown file, doc, whose text is text.
func (c *checker) document(doc, text string) ([]Problem, error) {
	var problems []Problem
	add := func(line int, ref, reason string) {
		problems = append(problems, Problem{File: doc, Line: line, Ref: ref, Reason: reason})
	}
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		var targets []string
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil && !fenced {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if fenced {
				break
			}
			reason, err := c.link(doc, target)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				add(n, target, reason)
			}
		}
		var words []string
		if fenced {
			words = strings.Fields(line)
		} else {
			for _, m := range spanRE.FindAllStringSubmatch(line, -1) {
				words = append(words, strings.Fields(m[2])...)
			}
		}
		for _, w := range words {
			if reason := c.path(w); reason != "" {
				add(n, w, reason)
			}
		}
		if !fenced {
			for _, w := range proseDocs(line) {
				if !c.docExists(doc, w) {
					add(n, w, "names a Markdown file the repository does not have")
				}
			}
		}
	}
	return problems, nil
}

// link returns why a link target of doc does not hold, or "".
func (c *checker) link(doc, target string) (string, error) {
	if schemeRE.MatchString(target) {
		return "", nil
	}
	file, frag, _ := strings.Cut(target, "#")
	rel := doc
	if file != "" {
		rel = filepath.ToSlash(filepath.Join(filepath.Dir(filepath.FromSlash(doc)), filepath.FromSlash(file)))
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "links outside the repository", nil
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(rel))); err != nil {
			return "no such file in the repository", nil
		}
	}
	if frag == "" || !strings.HasSuffix(rel, ".md") {
		return "", nil
	}
	anchors, err := c.anchorsOf(rel)
	if err != nil {
		return "", err
	}
	if !anchors[frag] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", rel, frag), nil
	}
	return "", nil
}

// path returns why a word of a code span or code block that names a
// repository path does not hold, or "" (also for a word that is not a
// repository path).
func (c *checker) path(word string) string {
	w := strings.TrimRight(strings.TrimLeft(word, "\"'`("), "\"'`),.;:")
	if strings.HasPrefix(w, "../") {
		return "names a path outside the repository"
	}
	w = strings.TrimPrefix(w, "./")
	top, _, ok := strings.Cut(w, "/")
	if !ok || !isRoot(top) {
		return ""
	}
	for _, expanded := range expandBraces(w) {
		if !c.exists(expanded) {
			return "no such path in the repository"
		}
	}
	return ""
}

// exists reports whether p, a path as the docs write it, names a file or
// directory of the repository: as written, without a trailing /... or a
// :line, or as a Go selector on a package (`internal/fires.Engine`).
func (c *checker) exists(p string) bool {
	p, _, _ = strings.Cut(p, "#")
	p = strings.TrimSuffix(p, "/...")
	if i := strings.LastIndex(p, ":"); i > 0 && strings.Trim(p[i+1:], "0123456789") == "" {
		p = p[:i]
	}
	if strings.ContainsAny(p, "*?[") {
		matches, err := filepath.Glob(filepath.Join(c.root, filepath.FromSlash(p)))
		return err == nil && len(matches) > 0
	}
	for {
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p))); err == nil {
			return true
		}
		// internal/fires.Engine, pkg/kvstore.Store.PublishAsync: a package and a selector.
		dir, name := p, ""
		if i := strings.LastIndex(p, "/"); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		j := strings.LastIndex(name, ".")
		if j <= 0 || !isIdent(name[j+1:]) {
			return false
		}
		p = dir + "/" + name[:j]
	}
}

// proseMDRE: a Markdown file named in prose ("see DESIGN.md").
var proseMDRE = regexp.MustCompile(`(?:^|[\s(])([A-Za-z0-9_][A-Za-z0-9_./-]*\.md)\b`)

// proseDocs returns the Markdown files a line names in its prose: outside
// code spans and link targets.
func proseDocs(line string) []string {
	line = spanRE.ReplaceAllString(line, " ")
	line = linkRE.ReplaceAllString(line, "] ")
	var out []string
	for _, m := range proseMDRE.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}

// docExists reports whether name, a Markdown file doc names in prose,
// is one of the repository's: relative to doc, to the root, or in docs/.
func (c *checker) docExists(doc, name string) bool {
	for _, p := range []string{
		filepath.Join(filepath.Dir(filepath.FromSlash(doc)), filepath.FromSlash(name)),
		filepath.FromSlash(name),
		filepath.Join("docs", filepath.FromSlash(name)),
	} {
		if _, err := os.Stat(filepath.Join(c.root, p)); err == nil {
			return true
		}
	}
	return false
}

// isIdent reports whether s is a Go identifier.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// expandBraces expands the shell's {a,b} and {1..3} in p, as the docs
// write a set of files (`bench-{before,after}-{1..3}.json`).
func expandBraces(p string) []string {
	open := strings.Index(p, "{")
	if open < 0 {
		return []string{p}
	}
	end := strings.Index(p[open:], "}")
	if end < 0 {
		return []string{p}
	}
	end += open
	alts := strings.Split(p[open+1:end], ",")
	if lo, hi, ok := strings.Cut(p[open+1:end], ".."); ok {
		from, err1 := strconv.Atoi(lo)
		to, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && from <= to {
			alts = alts[:0]
			for i := from; i <= to; i++ {
				alts = append(alts, strconv.Itoa(i))
			}
		}
	}
	var out []string
	for _, alt := range alts {
		out = append(out, expandBraces(p[:open]+alt+p[end+1:])...)
	}
	return out
}

// anchorsOf returns the anchors of a Markdown file of the repository:
// its headings' GitHub anchors and any <a id> or <a name>.
func (c *checker) anchorsOf(rel string) (map[string]bool, error) {
	if a, ok := c.anchors[rel]; ok {
		return a, nil
	}
	text, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("read %s for its anchors: %w", rel, err)
	}
	a := Anchors(string(text))
	c.anchors[rel] = a
	return a, nil
}

var explicitAnchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// Anchors returns the anchors a Markdown text has on GitHub: one per
// heading outside code blocks (a repeated one numbered -1, -2, ...), and
// every <a id="..."> or <a name="...">.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		for _, m := range explicitAnchorRE.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if title == "" || title[0] != ' ' {
			continue
		}
		slug := Slug(title)
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

var headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Slug is GitHub's anchor for a heading's text: links reduced to their
// text, lower case, everything but letters, digits, '_', '-' and spaces
// dropped, each space a '-'.
func Slug(title string) string {
	title = headingLinkRE.ReplaceAllString(strings.TrimSpace(title), "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
