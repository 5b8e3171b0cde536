//go:build !linux

package bench

import "os/exec"

// dieWithParent does nothing where there is no parent-death signal: a
// bench stopped hard may leave its scheduler processes running.
func dieWithParent(*exec.Cmd) {}
