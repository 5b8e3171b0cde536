// Package regfile reads the files a jetsched process is given at start
// (--config, and the checks of --server-config, --schedules,
// --audit-key-file) only when they are regular files of a bounded size: a
// FIFO blocks its reader until a writer comes (and a blocked open or read
// ignores SIGTERM), a device such as /dev/zero never ends, and a huge file
// is read whole into memory.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular: the path names a FIFO, a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file is larger than the cap it was read with.
var ErrTooLarge = errors.New("file too large")

// Read is the content of the regular file path, at most max bytes. The
// file is opened without blocking (a FIFO's open returns at once) and
// checked on the opened descriptor, so that a file swapped for a FIFO
// between a check and the open is refused too. Errors name path and wrap
// ErrNotRegular, ErrTooLarge or the file system's error.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err // *fs.PathError names path
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, tooLarge(path, max)
	}
	// The size can grow meanwhile, or lie (files of /proc): read one byte
	// past the cap to tell.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, tooLarge(path, max)
	}
	return b, nil
}

// Check refuses path unless it is a regular file, for files another
// parser reads (nats-server's config loader, say). It does not open path.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, fi)
}

func regular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	kind := "a special file"
	switch m := fi.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe), which would block until something writes to it"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s: %w: it is %s", path, ErrNotRegular, kind)
}

func tooLarge(path string, max int64) error {
	return fmt.Errorf("%s: %w: larger than %s", path, ErrTooLarge, size(max))
}

// size renders a cap: "1 MiB", "64 KiB", "100 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
