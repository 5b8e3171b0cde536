package cli

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jetsched/jetsched/internal/fires"
)

// crashHook implements JETSCHED_CRASH_AT=<step>[:<n>] for fault tests: the
// process exits with status 3, without any cleanup, the n-th time (default
// the first) the fire protocol reaches step. Empty: no hook.
func crashHook(spec string, exit func(int)) func(fires.Step) {
	if spec == "" {
		return nil
	}
	step, nth, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nth)
	if err != nil || n < 1 {
		n = 1
	}
	var seen atomic.Int64
	return func(s fires.Step) {
		if string(s) == step && seen.Add(1) == int64(n) {
			exit(3)
		}
	}
}
