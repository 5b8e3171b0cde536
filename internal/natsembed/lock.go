package natsembed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// ErrStoreLocked is returned by Start when another server, in this
// process or another, runs on the same store directory: two servers on
// one JetStream store overwrite each other's files (block data missing, a
// corrupt index, rollback alarms), so the second one is refused before it
// touches the store.
var ErrStoreLocked = errors.New("natsembed: the store directory is in use by another server")

// LockFile is the file in a store directory that the server running on it
// holds an exclusive lock on (flock, released when the server shuts down
// or its process ends, however it ends). It holds that process's pid, for
// the message of the one refused.
const LockFile = "scheduler.lock"

// storeLock is a held lock on a store directory.
type storeLock struct{ f *os.File }

// lockStore takes the exclusive lock on dir's LockFile without waiting:
// held elsewhere, it returns ErrStoreLocked naming dir and, when the lock
// file tells, the holder's pid.
func lockStore(dir string) (*storeLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("natsembed: lock file of store %q: %w", dir, err)
	}
	held, err := tryLock(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("natsembed: lock %s: %w", path, err)
	}
	if held {
		pid := holderPID(f)
		_ = f.Close()
		if pid > 0 {
			return nil, fmt.Errorf("%w: %s (pid %d holds its lock file %s)", ErrStoreLocked, dir, pid, path)
		}
		return nil, fmt.Errorf("%w: %s (another process holds its lock file %s)", ErrStoreLocked, dir, path)
	}
	// Ours: say who holds it. A failure here costs only the pid in a
	// refused server's message.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &storeLock{f: f}, nil
}

// holderPID is the pid the lock file holds (0: none readable).
func holderPID(f *os.File) int {
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release empties the lock file and lets the lock go. The file stays: a
// process that opened it meanwhile must lock the same file, not a new one
// created after an unlink. Safe on nil.
func (l *storeLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
}
