package account_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/account/accounttest"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// seedAndCount reads JETSCHED_ACCOUNT_SEED (default a fixed seed, so that
// CI replays the same cases; "random" picks one and prints it) and
// JETSCHED_ACCOUNT_CASES (default def) for the property tests: a longer
// run is `JETSCHED_ACCOUNT_SEED=random JETSCHED_ACCOUNT_CASES=200000 go
// test -run TestPlanMatchesModel ./internal/account/`.
func seedAndCount(t *testing.T, def int) (uint64, int) {
	t.Helper()
	seed := uint64(51)
	switch v := os.Getenv("JETSCHED_ACCOUNT_SEED"); v {
	case "":
	case "random":
		seed = rand.Uint64()
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("JETSCHED_ACCOUNT_SEED=%q: want a number or random", v)
		}
		seed = n
	}
	count := def
	if v := os.Getenv("JETSCHED_ACCOUNT_CASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("JETSCHED_ACCOUNT_CASES=%q: want a positive number", v)
		}
		count = n
	}
	t.Logf("seed %d, %d cases (JETSCHED_ACCOUNT_SEED=%d replays them)", seed, count, seed)
	return seed, count
}

// TestPlanMatchesModel compares the engine's plan (the compiled
// schedule's steps, chained as the engine and preview chain them: Explain,
// then ExplainAfter from each fire's occurrence) with the reference model
// on thousands of generated specs: the same fires, each from the same
// occurrence, and every occurrence the model merges or skips named by
// the plan's steps (itself, or within a run).
func TestPlanMatchesModel(t *testing.T) {
	seed, count := seedAndCount(t, 1500)
	r := rand.New(rand.NewPCG(seed, 51))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	compared := 0
	defer func() { t.Logf("%d specs compared (the others were refused at registration)", compared) }()
	for i := range count {
		from := base.Add(time.Duration(r.IntN(2*365*24*60)) * time.Minute)
		spec := accounttest.Spec(r, from)
		c, err := compile.Compile(spec, fmt.Sprintf("s%d", i), nil, nil)
		if err != nil {
			continue // a calendar that removes every occurrence, say: refused at registration
		}
		compared++
		if msg := comparePlan(c, from, 60); msg != "" {
			t.Fatalf("case %d (seed %d): %s\nspec %s\nfrom %s", i, seed, msg, specJSON(spec), from.Format(time.RFC3339))
		}
	}
}

// comparePlan compares n steps of c's plan after from with the model, ""
// when they agree.
func comparePlan(c compile.Compiled, from time.Time, n int) string {
	var fires []account.Occurrence
	var others []account.Occurrence
	rec := account.RecurrenceOf(c.Schedule)
	walked, budget := 0, 200*n
	rec.Walk(from, budget, func(o account.Occurrence) bool {
		walked++
		if o.Fate == account.Fires {
			fires = append(fires, o)
			return len(fires) < n
		}
		others = append(others, o)
		return true
	})
	var steps []cronx.Step
	st := cronx.Explain(c.Schedule, from)
	for len(steps) < len(fires) && !st.At.IsZero() {
		steps = append(steps, st)
		st = cronx.ExplainAfter(c.Schedule, st.At, st.Nominal)
	}
	if len(fires) == n && len(steps) < n || len(steps) > len(fires) {
		return fmt.Sprintf("the plan has %d fires where the model has %d", len(steps), len(fires))
	}
	if len(fires) < n && walked < budget && !st.At.IsZero() && len(steps) == len(fires) {
		return fmt.Sprintf("the plan fires at %s after the model's last fire", st.At.Format(time.RFC3339))
	}
	for i, f := range fires {
		if i >= len(steps) {
			return fmt.Sprintf("fire %d: the model fires at %s (from %s), the plan has ended", i, stamp(f.At), stamp(f.Nominal))
		}
		s := steps[i]
		if !s.At.Equal(f.At) || !s.Nominal.Equal(f.Nominal) {
			return fmt.Sprintf("fire %d: the plan fires at %s from %s, the model at %s from %s", i, stamp(s.At), stamp(s.Nominal), stamp(f.At), stamp(f.Nominal))
		}
	}
	if len(steps) == 0 {
		return ""
	}
	last := steps[len(steps)-1].Nominal
	for _, o := range others {
		if o.Nominal.After(last) {
			break // the plan's steps end at the last fire compared
		}
		if o.Fate == account.Merged && o.Nominal.Equal(o.At) {
			continue // merged into the fire at its own time: that fire stands for it
		}
		if !named(steps, o.Nominal) {
			return fmt.Sprintf("occurrence %s (%s: %s) is named by no step of the plan", stamp(o.Nominal), o.Fate, o.Reason)
		}
	}
	return ""
}

// named reports whether some step names occurrence n among what it
// passed over.
func named(steps []cronx.Step, n time.Time) bool {
	for _, s := range steps {
		for _, sk := range s.Skipped {
			if sk.Nominal.Equal(n) || !sk.Through.IsZero() && !n.Before(sk.Nominal) && !n.After(sk.Through) {
				return true
			}
		}
		if s.SkippedCount > len(s.Skipped) {
			return true // more passed over than listed: cannot tell
		}
	}
	return false
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(none)"
	}
	return t.Format(time.RFC3339Nano)
}

func specJSON(s kvstore.Spec) string {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%+v", s)
	}
	return strings.TrimSpace(string(b))
}
