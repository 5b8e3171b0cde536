package dueindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestIndex(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name string
		ops  func(x *Index)
		now  time.Time
		want []string // PopDue order
	}{
		{"empty", func(*Index) {}, at(10), nil},
		{"earliest first", func(x *Index) { x.Set("b", at(2)); x.Set("a", at(1)); x.Set("c", at(3)) }, at(10), []string{"a", "b", "c"}},
		{"only due ones", func(x *Index) { x.Set("a", at(1)); x.Set("b", at(5)) }, at(2), []string{"a"}},
		{"due at now is due", func(x *Index) { x.Set("a", at(2)) }, at(2), []string{"a"}},
		{"move later", func(x *Index) { x.Set("a", at(1)); x.Set("b", at(2)); x.Set("a", at(3)) }, at(10), []string{"b", "a"}},
		{"move earlier", func(x *Index) { x.Set("a", at(5)); x.Set("b", at(2)); x.Set("a", at(1)) }, at(10), []string{"a", "b"}},
		{"remove", func(x *Index) { x.Set("a", at(1)); x.Set("b", at(2)); x.Remove("a"); x.Remove("zz") }, at(10), []string{"b"}},
		{"ties by id", func(x *Index) { x.Set("b", at(1)); x.Set("a", at(1)) }, at(10), []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x Index
			tc.ops(&x)
			var got []string
			for {
				id, ok := x.PopDue(tc.now)
				if !ok {
					break
				}
				got = append(got, id)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("PopDue order = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestIndexMatchesModel drives the index and a plain map with the same
// random operations and checks that they always agree.
func TestIndexMatchesModel(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		var x Index
		model := map[string]time.Time{}
		t0 := time.Unix(1_800_000_000, 0)
		for step := range 2000 {
			id := fmt.Sprintf("s%d", r.IntN(40))
			switch r.IntN(4) {
			case 0, 1:
				due := t0.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
				x.Set(id, due)
				model[id] = due
			case 2:
				x.Remove(id)
				delete(model, id)
			case 3:
				now := t0.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
				got, ok := x.PopDue(now)
				want, wantOK := modelMin(model, now)
				if ok != wantOK || got != want {
					t.Fatalf("seed %d step %d: PopDue(%v) = %q,%v; model %q,%v", seed, step, now, got, ok, want, wantOK)
				}
				delete(model, got)
			}
			if x.Len() != len(model) {
				t.Fatalf("seed %d step %d: Len = %d, model %d", seed, step, x.Len(), len(model))
			}
			for id, due := range model {
				if d, ok := x.Due(id); !ok || !d.Equal(due) {
					t.Fatalf("seed %d step %d: Due(%q) = %v,%v; want %v", seed, step, id, d, ok, due)
				}
			}
		}
	}
}

func modelMin(m map[string]time.Time, now time.Time) (string, bool) {
	best, found := "", false
	for id, due := range m {
		if due.After(now) {
			continue
		}
		if !found || due.Before(m[best]) || due.Equal(m[best]) && id < best {
			best, found = id, true
		}
	}
	return best, found
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{9, 9, 9, 0, 0, 0, 255, 128, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var x Index
		model := map[string]time.Time{}
		t0 := time.Unix(1_800_000_000, 0)
		for i := 0; i+1 < len(ops); i += 2 {
			id := string(rune('a' + ops[i]%8))
			due := t0.Add(time.Duration(ops[i+1]) * time.Second)
			switch ops[i] % 3 {
			case 0, 1:
				x.Set(id, due)
				model[id] = due
			case 2:
				x.Remove(id)
				delete(model, id)
			}
		}
		prev := time.Time{}
		for x.Len() > 0 {
			_, due, _ := x.Peek()
			id, ok := x.PopDue(due)
			if !ok || due.Before(prev) || !model[id].Equal(due) {
				t.Fatalf("pop %q at %v (ok %v) after %v; model %v", id, due, ok, prev, model[id])
			}
			delete(model, id)
			prev = due
		}
		if len(model) != 0 {
			t.Fatalf("index lost %v", model)
		}
	})
}

// BenchmarkIndex measures one reschedule (Set) plus one PopDue on an index
// of 100,000 schedules: the loop's cost per fire.
func BenchmarkIndex(b *testing.B) {
	var x Index
	t0 := time.Unix(1_800_000_000, 0)
	ids := make([]string, 100_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%d", i)
		x.Set(ids[i], t0.Add(time.Duration(i)*time.Millisecond))
	}
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		id, ok := x.PopDue(now.Add(time.Hour))
		if !ok {
			b.Fatal("empty")
		}
		now = now.Add(time.Millisecond)
		x.Set(id, now.Add(100*time.Second))
	}
}
