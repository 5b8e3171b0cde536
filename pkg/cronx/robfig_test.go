package cronx_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/robfig/cron/v3"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// nexter is what robfig's Schedule and cronexpr's *Expression have in
// common with cronx: Next returns the first fire time strictly after its
// argument, or the zero time.
type nexter interface {
	Next(time.Time) time.Time
}

// diffBounds are the ranges of the five standard fields, day-of-week 0-6
// (robfig rejects 7).
var diffBounds = [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}

// diffField returns a random field made only of numbers, ranges, steps,
// lists and '*'. A '*' (alone or as "*/n") is always the whole field: the
// libraries read "*" inside a list differently.
func diffField(r *rand.Rand, lo, hi int) string {
	step := func() int { return 1 + r.IntN(hi-lo) }
	switch r.IntN(10) {
	case 0, 1, 2:
		return "*"
	case 3:
		return fmt.Sprintf("*/%d", step())
	}
	items := make([]string, 1+r.IntN(3))
	for i := range items {
		a := lo + r.IntN(hi-lo+1)
		b := a + r.IntN(hi-a+1)
		switch r.IntN(4) {
		case 0:
			items[i] = fmt.Sprint(a)
		case 1:
			items[i] = fmt.Sprintf("%d-%d", a, b)
		case 2:
			items[i] = fmt.Sprintf("%d-%d/%d", a, b, step())
		case 3:
			items[i] = fmt.Sprintf("%d/%d", a, step())
		}
	}
	return strings.Join(items, ",")
}

func diffExpr(r *rand.Rand) []string {
	f := make([]string, 5)
	for i, b := range diffBounds {
		f[i] = diffField(r, b[0], b[1])
	}
	return f
}

// diffLibs parses a 5-field expression with robfig (ParseStandard) and
// cronexpr (7 fields: second 0, year *).
func diffLibs(t *testing.T, fields []string) (rob, cex nexter) {
	t.Helper()
	expr := strings.Join(fields, " ")
	rs, err := cron.ParseStandard(expr)
	if err != nil {
		t.Fatalf("robfig rejected %q: %v", expr, err)
	}
	ce, err := cronexpr.Parse("0 " + expr + " *")
	if err != nil {
		t.Fatalf("cronexpr rejected %q: %v", expr, err)
	}
	return rs, ce
}

// andNext is the first instant after after that both a and b fire at (a
// leapfrog intersection of two increasing sequences), or zero if there is
// none before horizon. Both fire on whole seconds.
func andNext(a, b nexter, after, horizon time.Time) time.Time {
	at := after
	for {
		ta := a.Next(at)
		if ta.IsZero() || !ta.Before(horizon) {
			return time.Time{}
		}
		tb := b.Next(ta.Add(-time.Second)) // first b fire at or after ta
		if tb.IsZero() || !tb.Before(horizon) {
			return time.Time{}
		}
		if tb.Equal(ta) {
			return ta
		}
		at = tb.Add(-time.Second) // first a fire at or after tb
	}
}

// clip maps fire times at or beyond horizon to the zero time.
func clip(t, horizon time.Time) time.Time {
	if t.IsZero() || !t.Before(horizon) {
		return time.Time{}
	}
	return t.UTC()
}

// dayRuleLibs returns robfig and cronexpr schedules that, together with
// andNext, answer an expression under a day-of-month/day-of-week rule, and
// whether their answer is an intersection (andNext of the two pairs).
//
// robfig ("*" and "*/1" unrestricted) and cronexpr ("*" unrestricted, any
// "*/n" restricted) both OR two restricted fields. So:
//   - cronie ANDs when a day field starts with '*' and neither is a bare
//     "*": the answer is the intersection of the expression with
//     day-of-week "*" and with day-of-month "*", which all three libraries
//     read the same way;
//   - posix is what they do, except that robfig reads "*/1" as "*": for
//     robfig such a day field is written as its full range;
//   - and is the intersection whenever neither day field is a bare "*".
func dayRuleLibs(t *testing.T, fields []string, rule cronx.DomDow) (rob, cex nexter, robDays, cexDays [2]nexter, and bool) {
	t.Helper()
	dom, dow := fields[2], fields[4]
	switch rule {
	case cronx.DomDowCronie:
		and = (strings.HasPrefix(dom, "*") || strings.HasPrefix(dow, "*")) && dom != "*" && dow != "*"
	case cronx.DomDowAnd:
		and = dom != "*" && dow != "*"
	}
	if and {
		f1 := append([]string(nil), fields...)
		f1[4] = "*"
		f2 := append([]string(nil), fields...)
		f2[2] = "*"
		robDays[0], cexDays[0] = diffLibs(t, f1)
		robDays[1], cexDays[1] = diffLibs(t, f2)
		return nil, nil, robDays, cexDays, true
	}
	rf := append([]string(nil), fields...)
	if rule == cronx.DomDowPOSIX {
		if rf[2] == "*/1" {
			rf[2] = "1-31"
		}
		if rf[4] == "*/1" {
			rf[4] = "0-6"
		}
	}
	rob, _ = diffLibs(t, rf)
	_, cex = diffLibs(t, fields)
	return rob, cex, robDays, cexDays, false
}

// TestDifferentialRobfigCronexpr compares cronx with robfig/cron/v3 and
// hashicorp/cronexpr on random 5-field expressions in UTC, under each
// day-of-month/day-of-week rule (see dayRuleLibs for how the libraries
// answer each): where robfig and cronexpr agree, cronx must agree; where
// they disagree, cronx must side with one of them.
//
// Horizons: robfig gives up five years after the start year and cronexpr
// after 2099, so all results are compared up to the earlier horizon.
func TestDifferentialRobfigCronexpr(t *testing.T) {
	for _, rule := range []cronx.DomDow{cronx.DomDowCronie, cronx.DomDowPOSIX, cronx.DomDowAnd} {
		t.Run(rule.String(), func(t *testing.T) { differential(t, rule) })
	}
}

func differential(t *testing.T, rule cronx.DomDow) {
	r := rand.New(rand.NewPCG(2026, 7))
	n := 2000
	if testing.Short() {
		n = 300
	}
	var compared, agreed, disagreed, leapfrog, never int
	var withRobfig, withCronexpr int
	example := ""
	lo := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2091, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range n {
		fields := diffExpr(r)
		expr := strings.Join(fields, " ")
		rob, cex, robDays, cexDays, and := dayRuleLibs(t, fields, rule)
		if and {
			leapfrog++
		}
		after := time.Unix(lo+r.Int64N(hi-lo), r.Int64N(1e9)).UTC()

		// libs returns robfig's and cronexpr's next fire time under the
		// rule, and the horizon both were searched to: robfig stops at
		// the end of the year five years after the first candidate
		// second, cronexpr at the end of 2099.
		libs := func(after time.Time) (tr, te, horizon time.Time) {
			first := after.Truncate(time.Second).Add(time.Second)
			horizon = time.Date(first.Year()+6, 1, 1, 0, 0, 0, 0, time.UTC)
			if lim := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC); lim.Before(horizon) {
				horizon = lim
			}
			if and {
				return andNext(robDays[0], robDays[1], after, horizon), andNext(cexDays[0], cexDays[1], after, horizon), horizon
			}
			return clip(rob.Next(after), horizon), clip(cex.Next(after), horizon), horizon
		}

		c, err := cronx.NewCron(expr, cronx.Options{DomDow: rule})
		if err != nil {
			var pe *cronx.ParseError
			if !errors.As(err, &pe) || pe.Field != "cron" {
				t.Fatalf("cronx rejected %q: %v", expr, err)
			}
			// "Never fires": neither library may fire either.
			if tr, te, _ := libs(after); !tr.IsZero() || !te.IsZero() {
				t.Fatalf("cronx says %q never fires (%v), but after %v robfig gives %v and cronexpr %v (intersection: %v)", expr, err, after, fmtInstant(tr), fmtInstant(te), and)
			}
			never++
			continue
		}

		for range 3 {
			tr, te, horizon := libs(after)
			got := c.Next(after)
			tc := clip(got, horizon)
			compared++
			if tr.Equal(te) {
				agreed++
				if !tc.Equal(tr) {
					t.Fatalf("%q after %v: cronx %v, robfig and cronexpr agree on %v (intersection: %v)", expr, after, fmtInstant(got), fmtInstant(tr), and)
				}
			} else {
				disagreed++
				if example == "" {
					example = fmt.Sprintf("%q after %v: robfig %v, cronexpr %v, cronx %v", expr, after, fmtInstant(tr), fmtInstant(te), fmtInstant(got))
				}
				switch {
				case tc.Equal(tr):
					withRobfig++
				case tc.Equal(te):
					withCronexpr++
				default:
					t.Fatalf("%q after %v: cronx %v agrees with neither robfig %v nor cronexpr %v", expr, after, fmtInstant(got), fmtInstant(tr), fmtInstant(te))
				}
			}
			if tc.IsZero() {
				break
			}
			after = got
		}
	}
	t.Logf("dom_dow %s: %d expressions (%d never fire, %d compared by intersection), %d comparisons: %d with robfig and cronexpr agreeing, %d disagreeing (cronx sided with robfig %d, with cronexpr %d)",
		rule, n, never, leapfrog, compared, agreed, disagreed, withRobfig, withCronexpr)
	if example != "" {
		t.Logf("example disagreement: %s", example)
	}
	if agreed < compared*9/10 {
		t.Errorf("robfig and cronexpr agree on only %d of %d comparisons: the comparison is too weak", agreed, compared)
	}
}

// TestDifferentialAndIntersection checks the intersection helper on an
// expression worked out by hand: odd days that are Mondays, 2024-01.
func TestDifferentialAndIntersection(t *testing.T) {
	rob, cex := diffLibs(t, strings.Fields("0 0 */2 * *"))
	rob2, cex2 := diffLibs(t, strings.Fields("0 0 * * 1"))
	after := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	horizon := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	want := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	if got := andNext(rob, rob2, after, horizon); !got.Equal(want) {
		t.Errorf("robfig intersection: %v, want %v", got, want)
	}
	if got := andNext(cex, cex2, after, horizon); !got.Equal(want) {
		t.Errorf("cronexpr intersection: %v, want %v", got, want)
	}
}
