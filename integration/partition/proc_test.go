package partition

import (
	"testing"

	"github.com/jetsched/jetsched/internal/faulttest"
)

// proc is a program run inside a namespace (`ip netns exec NS bin args`,
// which execs in place: the pid is the program's). It is killed when the
// test ends, and its log tail is printed when the test failed.
type proc struct {
	*faulttest.Proc
	ns, bin string
}

func newProc(t *testing.T, name, ns, bin, logPath, ready string, args []string) *proc {
	p := &proc{Proc: faulttest.NewProc(name, logPath, ready, nsArgv(ns, bin, args)), ns: ns, bin: bin}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("---- %s: %s ----\n%s\n---- end of %s ----", name, logPath, faulttest.Tail(logPath, 0, 16<<10), name)
		}
	})
	return p
}

func nsArgv(ns, bin string, args []string) []string {
	return append([]string{"ip", "netns", "exec", ns, bin}, args...)
}

// setArgs changes the program's arguments for the next start.
func (p *proc) setArgs(args []string) { p.SetArgv(nsArgv(p.ns, p.bin, args)) }
