package memlimit_test

import (
	"runtime/debug"
	"testing"
	"testing/fstest"

	"github.com/jetsched/jetsched/internal/memlimit"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1.5GiB": 3 << 29, "800MB": 800e6, "1073741824": 1 << 30, "2 gib": 2 << 30, "512MiB": 512 << 20,
	} {
		if got, err := memlimit.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "1.5 parsecs", "-1GiB", "10MB", "1e30"} {
		if _, err := memlimit.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		want int64
	}{
		{"v2 with a limit", fstest.MapFS{
			"proc/self/cgroup":                    {Data: []byte("0::/jobs/sched\n")},
			"sys/fs/cgroup/jobs/sched/memory.max": {Data: []byte("2147483648\n")},
		}, 2 << 30},
		{"v2 unlimited", fstest.MapFS{
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("max\n")},
		}, 0},
		{"v1 with a limit", fstest.MapFS{
			"proc/self/cgroup": {Data: []byte("9:pids:/\n4:memory:/docker/abc\n")},
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": {Data: []byte("1073741824")},
		}, 1 << 30},
		{"v1 unlimited (a huge number)", fstest.MapFS{
			"proc/self/cgroup":                           {Data: []byte("4:memory:/\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712")},
		}, 0},
		{"no cgroup", fstest.MapFS{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := memlimit.CgroupLimit(tc.fs)
			if ok != (tc.want > 0) || got != tc.want {
				t.Fatalf("CgroupLimit = %d, %v; want %d", got, ok, tc.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // restore
	noEnv := func(string) string { return "" }
	cg := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("2147483648")},
	}
	d, err := memlimit.Apply("auto", noEnv, cg)
	limit := int64(2 << 30)
	want := int64(float64(limit) * 0.9)
	if err != nil || d.Limit != want || debug.SetMemoryLimit(-1) != d.Limit {
		t.Fatalf("auto: %+v, %v; runtime limit %d", d, err, debug.SetMemoryLimit(-1))
	}
	d, err = memlimit.Apply("1GiB", noEnv, cg)
	if err != nil || d.Limit != 1<<30 || d.Source != "flag" || debug.SetMemoryLimit(-1) != 1<<30 {
		t.Fatalf("flag: %+v, %v", d, err)
	}
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "700MiB"
		}
		return ""
	}
	if d, err := memlimit.Apply("1GiB", env, cg); err != nil || d.Source != "GOMEMLIMIT" || d.Limit != 0 {
		t.Fatalf("GOMEMLIMIT set: %+v, %v; want it left to the runtime", d, err)
	}
	if _, err := memlimit.Apply("lots", noEnv, cg); err == nil {
		t.Fatal("a bad size was accepted")
	}
}

// SetGCPercent sets GOGC from the flag, unless a GOGC environment variable
// set it: then it reports the runtime's value and leaves it.
func TestSetGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	noEnv := func(string) string { return "" }
	if got, src := memlimit.SetGCPercent(250, noEnv); got != 250 || src != "flag" {
		t.Fatalf("SetGCPercent(250) = %d, %q; want 250, flag", got, src)
	}
	if now := debug.SetGCPercent(250); now != 250 {
		t.Fatalf("runtime GOGC %d after SetGCPercent(250)", now)
	}
	env := func(k string) string {
		if k == "GOGC" {
			return "250"
		}
		return ""
	}
	if got, src := memlimit.SetGCPercent(50, env); got != 250 || src != "GOGC" {
		t.Fatalf("with GOGC set: SetGCPercent(50) = %d, %q; want the runtime's 250, GOGC", got, src)
	}
	if now := debug.SetGCPercent(250); now != 250 {
		t.Fatalf("runtime GOGC %d: SetGCPercent overrode the environment's", now)
	}
}
