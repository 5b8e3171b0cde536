//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package natsembed

import "os"

// tryLock takes no lock where flock is not available: there, nothing
// stops a second server on the same store, and the operator must not
// start one (docs/operations.md).
func tryLock(*os.File) (held bool, err error) { return false, nil }
