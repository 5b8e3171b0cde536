// Package memlimit sets the Go runtime's soft memory limit for a scheduler
// process: without one, Go's collector lets the heap grow to twice the
// live heap between collections, so a million schedules that need 0.8 GB
// live take 1.9 GB of RAM. With a limit the collector works harder as the
// heap nears it, and the process stays within it (as long as the live heap
// fits). Headroom caps how far past the live heap GOGC lets a large heap
// grow, without a limit.
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
)

// Auto is the flag value that derives the limit from the cgroup.
const Auto = "auto"

// share of a cgroup's memory limit given to the Go heap: the rest is for
// the embedded server's buffers, goroutine stacks and the runtime.
const share = 0.9

// Decision is what Apply did.
type Decision struct {
	// Limit in bytes; 0 when no limit was set by Apply.
	Limit int64
	// Source says where it came from: "flag", "cgroup <path>",
	// "GOMEMLIMIT" (the environment variable wins; Apply leaves it),
	// or "none".
	Source string
}

// Apply sets the runtime's soft memory limit from flag: a size such as
// "1.5GiB" or "800MB", "0" or "off" for none, or "auto" for 90% of the
// process's cgroup memory limit when it has one. A GOMEMLIMIT environment
// variable (getenv) takes precedence: the runtime has read it already.
// root is the file system where /proc and /sys are (os.DirFS("/")).
func Apply(flag string, getenv func(string) string, root fs.FS) (Decision, error) {
	if getenv("GOMEMLIMIT") != "" {
		return Decision{Source: "GOMEMLIMIT"}, nil
	}
	if off(flag) {
		return Decision{Source: "none"}, nil
	}
	var d Decision
	switch strings.TrimSpace(strings.ToLower(flag)) {
	case Auto:
		limit, path, ok := CgroupLimit(root)
		if !ok {
			return Decision{Source: "none"}, nil
		}
		d = Decision{Limit: int64(float64(limit) * share), Source: "cgroup " + path}
	default:
		n, err := ParseSize(flag)
		if err != nil {
			return Decision{}, err
		}
		d = Decision{Limit: n, Source: "flag"}
	}
	debug.SetMemoryLimit(d.Limit)
	return d, nil
}

// DefaultGCPercent is the collector's GOGC for a scheduler process unless
// GOGC or a flag says otherwise. At Go's 100 on two cores, a scheduler
// firing 10,000 slots a second (with an embedded server) collects about
// every 0.7 s, and each collection's marking takes half the CPU for
// 100-180 ms: the slots due meanwhile queue up, which was most of the
// steady p99 lateness (75 ms at 100, 15 ms at 200; bench/results/LOG.md).
// 200 lets the heap grow to three times the live heap between
// collections; a memory limit (Apply) still caps it.
const DefaultGCPercent = 200

// SetGCPercent sets the collector's GOGC to percent (negative: off)
// unless a GOGC environment variable (getenv) set it already. It returns
// what applies, and where it came from ("flag" or "GOGC").
func SetGCPercent(percent int, getenv func(string) string) (applied int, source string) {
	if v := getenv("GOGC"); v != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old) // read back what the runtime took from GOGC
		return old, "GOGC"
	}
	debug.SetGCPercent(percent)
	return percent, "flag"
}

// off reports whether a size flag says none: empty, 0, off or none.
func off(flag string) bool {
	switch strings.TrimSpace(strings.ToLower(flag)) {
	case "", "0", "off", "none":
		return true
	}
	return false
}

// ParseHeadroom reads --gc-headroom: a size (see ParseSize), or 0, off or
// none for no headroom (GOGC alone).
func ParseHeadroom(flag string) (int64, error) {
	if off(flag) {
		return 0, nil
	}
	return ParseSize(flag)
}

// ParseSize reads a byte size: a number with an optional unit B, KB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), case
// insensitive; "1.5GiB", "800MB", "1073741824".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || v < 0 {
		return 0, fmt.Errorf("memory size %q: want a number and a unit such as 1.5GiB or 800MB", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("memory size %q: unknown unit %q (want B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("memory size %q: too large", s)
	}
	if b < 64<<20 {
		return 0, fmt.Errorf("memory size %q: below 64MiB, a scheduler cannot run in it", s)
	}
	return int64(b), nil
}

// CgroupLimit is the memory limit of this process's cgroup (v2
// memory.max, or v1 memory.limit_in_bytes), and the file it was read
// from; ok is false when there is none (no cgroup, or unlimited).
func CgroupLimit(root fs.FS) (limit int64, path string, ok bool) {
	v2, v1, err := cgroupPaths(root)
	if err != nil {
		return 0, "", false
	}
	for _, p := range []string{
		"sys/fs/cgroup" + v2 + "/memory.max",
		"sys/fs/cgroup/memory" + v1 + "/memory.limit_in_bytes",
	} {
		data, err := fs.ReadFile(root, strings.TrimPrefix(strings.ReplaceAll(p, "//", "/"), "/"))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0, "", false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // v1 says "unlimited" with a huge number
			return 0, "", false
		}
		return n, "/" + p, true
	}
	return 0, "", false
}

// cgroupPaths reads /proc/self/cgroup: the v2 path ("0::<path>") and the
// v1 memory controller's path.
func cgroupPaths(root fs.FS) (v2, v1 string, err error) {
	f, err := root.Open("proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case strings.Contains(","+parts[1]+",", ",memory,"):
			v1 = parts[2]
		}
	}
	if v2 == "" && v1 == "" {
		return "", "", errors.New("memlimit: no cgroup in /proc/self/cgroup")
	}
	if v2 == "/" {
		v2 = ""
	}
	if v1 == "/" {
		v1 = ""
	}
	return v2, v1, sc.Err()
}
