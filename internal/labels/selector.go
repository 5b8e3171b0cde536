// Package labels reads and matches the labels of schedules and timers:
// `--label k=v` pairs, label selectors in the Kubernetes grammar
// (`team=billing,tier!=gold`, `env in (prod,staging)`, `!legacy`), and
// Sets, which give each distinct label set of a read model a small number
// so that a row keeps four bytes instead of a map. The checks on keys and
// values are internal/fieldcheck's (LabelKey, LabelValue), the same the
// records pass.
package labels

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// Op is a requirement's operator.
type Op string

// The operators of a selector.
const (
	Equals    Op = "="     // key=value: the label is set to value
	NotEquals Op = "!="    // key!=value: the label is missing or set to another value
	In        Op = "in"    // key in (a,b): the label is set to one of the values
	NotIn     Op = "notin" // key notin (a,b): the label is missing or set to none of them
	Exists    Op = "exists"
	NotExists Op = "!"
)

// Requirement is one comma-separated term of a selector.
type Requirement struct {
	Key    string
	Op     Op
	Values []string // one for Equals and NotEquals, one or more for In and NotIn
}

// Matches reports whether labels meet the requirement.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case Equals, In:
		return ok && slices.Contains(r.Values, v)
	case NotEquals, NotIn:
		return !ok || !slices.Contains(r.Values, v)
	case Exists:
		return ok
	case NotExists:
		return !ok
	}
	return false
}

func (r Requirement) String() string {
	switch r.Op {
	case Exists:
		return r.Key
	case NotExists:
		return "!" + r.Key
	case In, NotIn:
		return r.Key + " " + string(r.Op) + " (" + strings.Join(r.Values, ",") + ")"
	}
	return r.Key + string(r.Op) + r.Values[0]
}

// Selector is a conjunction of requirements; the zero Selector matches
// every label set.
type Selector struct {
	reqs []Requirement
}

// Requirements are the selector's terms, in the order given.
func (s Selector) Requirements() []Requirement { return slices.Clone(s.reqs) }

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool { return len(s.reqs) == 0 }

// Matches reports whether labels meet every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	for _, r := range s.reqs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// String is the selector in canonical form: its requirements joined by
// commas, as Parse reads them.
func (s Selector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// FromLabels is the selector of `--label k=v` filters: every pair must
// hold.
func FromLabels(m map[string]string) Selector {
	var s Selector
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s.reqs = append(s.reqs, Requirement{Key: k, Op: Equals, Values: []string{m[k]}})
	}
	return s
}

// And is the selector that requires both s and o.
func (s Selector) And(o Selector) Selector {
	return Selector{reqs: append(slices.Clip(s.reqs), o.reqs...)}
}

// Parse reads a selector: requirements separated by commas, each one of
//
//	key=value  key==value  key!=value
//	key in (v1,v2)  key notin (v1,v2)
//	key  !key
//
// with the keys and values of labels (fieldcheck.LabelKey, LabelValue)
// and spaces allowed between the parts. "" is the empty selector. Errors
// are *fieldcheck.FieldError naming field and the position.
func Parse(field, text string) (Selector, error) {
	p := parser{field: field, s: text}
	var sel Selector
	p.space()
	if p.end() {
		return sel, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return Selector{}, err
		}
		sel.reqs = append(sel.reqs, r)
		p.space()
		if p.end() {
			return sel, nil
		}
		if !p.take(",") {
			return Selector{}, p.fail("want ',' between requirements")
		}
	}
}

type parser struct {
	field, s string
	i        int
}

func (p *parser) end() bool { return p.i >= len(p.s) }

func (p *parser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// take consumes tok when the input continues with it.
func (p *parser) take(tok string) bool {
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

// word reads the longest run of key and value characters.
func (p *parser) word() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) fail(reason string) error {
	return fieldcheck.New(p.field, p.s, fmt.Sprintf("%s at byte %d (the form: k=v,k2!=v2,k3 in (a,b),!k4; docs/cli.md)", reason, p.i))
}

func (p *parser) requirement() (Requirement, error) {
	p.space()
	if p.take("!") {
		p.space()
		k, err := p.key()
		return Requirement{Key: k, Op: NotExists}, err
	}
	k, err := p.key()
	if err != nil {
		return Requirement{}, err
	}
	p.space()
	switch {
	case p.take("!="):
		v, err := p.value(k)
		return Requirement{Key: k, Op: NotEquals, Values: []string{v}}, err
	case p.take("=="), p.take("="):
		v, err := p.value(k)
		return Requirement{Key: k, Op: Equals, Values: []string{v}}, err
	case p.end() || p.s[p.i] == ',':
		return Requirement{Key: k, Op: Exists}, nil
	}
	save := p.i
	op := Op(p.word())
	if op != In && op != NotIn {
		p.i = save
		return Requirement{}, p.fail("want =, !=, in or notin after key " + k)
	}
	p.space()
	if !p.take("(") {
		return Requirement{}, p.fail("want '(' after " + string(op))
	}
	r := Requirement{Key: k, Op: op}
	for {
		v, err := p.value(k)
		if err != nil {
			return Requirement{}, err
		}
		r.Values = append(r.Values, v)
		p.space()
		if p.take(")") {
			return r, nil
		}
		if !p.take(",") {
			return Requirement{}, p.fail("want ',' or ')' in the value list")
		}
	}
}

func (p *parser) key() (string, error) {
	k := p.word()
	if k == "" {
		return "", p.fail("want a label key")
	}
	if err := fieldcheck.LabelKey(k); err != nil {
		return "", err
	}
	return k, nil
}

func (p *parser) value(k string) (string, error) {
	p.space()
	v := p.word()
	if err := fieldcheck.LabelValue(k, v); err != nil {
		return "", err
	}
	return v, nil
}
