package soak

import (
	"strings"
	"testing"
	"time"
)

func TestFlatRule(t *testing.T) {
	rule := flatRule{warmFirst: 2 * time.Minute, warmRestart: time.Minute, window: 2 * time.Minute,
		rss: tolerance{pct: 15}, heap: tolerance{pct: 15, abs: 16}, goroutines: tolerance{pct: 10}, fds: tolerance{abs: 5}}
	// series is a sample every 10s for life, with levels by age.
	series := func(life time.Duration, f func(age time.Duration) sample) []sample {
		var out []sample
		for age := time.Duration(0); age <= life; age += 10 * time.Second {
			s := f(age)
			s.age = age
			out = append(out, s)
		}
		return out
	}
	flat := func(time.Duration) sample {
		return sample{rssKiB: 100 << 10, heapGoalKiB: 60 << 10, goroutines: 100, fds: 30}
	}
	for _, tc := range []struct {
		name   string
		life   time.Duration
		first  bool
		f      func(time.Duration) sample
		judged bool
		fail   []string // substrings of the failures, in order
	}{
		{"flat", 10 * time.Minute, true, flat, true, nil},
		{"warm-up growth is not counted", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			if age < 2*time.Minute {
				s.rssKiB, s.goroutines, s.fds = 20<<10, 40, 10
			}
			return s
		}, true, nil},
		{"within the tolerances", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			if age > 7*time.Minute {
				s.rssKiB, s.goroutines, s.fds = 114<<10, 109, 35
			}
			return s
		}, true, nil},
		{"RSS leak", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.rssKiB = int64(100<<10) + int64(age/time.Second)*100 // +100 KiB/s: 100 MiB -> 158 MiB
			return s
		}, true, []string{"RSS rose"}},
		{"goroutine and fd leak", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.goroutines = 100 + int(age/time.Second)/10
			s.fds = 30 + int(age/time.Minute)
			return s
		}, true, []string{"goroutines rose", "open files rose"}},
		{"a goroutine spike is not a leak", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			if age == 9*time.Minute {
				s.goroutines, s.fds = 900, 90
			}
			return s
		}, true, nil},
		{"an RSS saw-tooth is flat", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.rssKiB = int64(100<<10) + int64(age/(10*time.Second)%9)*(25<<10) // 100..300 MiB every 90 s
			return s
		}, true, nil},
		{"a higher saw-tooth is not", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.rssKiB = int64(100<<10) + int64(age/(10*time.Second)%9)*(25<<10)
			if age > 7*time.Minute {
				s.rssKiB += 60 << 10
			}
			return s
		}, true, []string{"RSS rose"}},
		{"one high RSS sample in the last third is not a level", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			if age == 9*time.Minute {
				s.rssKiB = 130 << 10 // +30%, once
			}
			return s
		}, true, nil},
		{"a high RSS in every span of the last third is", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			if age > 7*time.Minute && age%time.Minute == 0 {
				s.rssKiB = 130 << 10 // +30%, once a minute
			}
			return s
		}, true, []string{"RSS rose"}},
		{"heap leak", 20 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.heapGoalKiB += int64(age/time.Second) * 50 // 3 MiB a minute: 60 -> 120 MiB
			return s
		}, true, []string{"heap goal rose"}},
		{"the heap goal's swing is not a leak", 10 * time.Minute, true, func(age time.Duration) sample {
			s := flat(age)
			s.heapGoalKiB = int64(47<<10) + int64(age/(10*time.Second)%4)*(8<<10) // 47..71 MiB
			return s
		}, true, nil},
		{"too short", 5 * time.Minute, true, flat, false, nil},
		{"restarted, long enough", 270 * time.Second, false, flat, true, nil},
		{"restarted, too short", 4 * time.Minute, false, flat, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := rule.judge(series(tc.life, tc.f), tc.life, tc.first)
			if v.judged != tc.judged {
				t.Fatalf("judged %v (%s), want %v", v.judged, v.why, tc.judged)
			}
			if len(v.failures) != len(tc.fail) {
				t.Fatalf("failures %q, want %d like %q", v.failures, len(tc.fail), tc.fail)
			}
			for i, f := range tc.fail {
				if !strings.Contains(v.failures[i], f) {
					t.Errorf("failure %d %q, want %q", i, v.failures[i], f)
				}
			}
		})
	}
}
