package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: a regular file within the cap is read whole; one past it, a
// directory and a device are refused with the sentinel, naming the path;
// a file whose size lies (/proc) is still cut at the cap.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(ok, 5); err != nil || string(b) != "12345" {
		t.Fatalf("Read(%s, 5) = %q, %v", ok, b, err)
	}
	for _, c := range []struct {
		path string
		max  int64
		want error
	}{
		{ok, 4, ErrTooLarge},
		{dir, 1 << 20, ErrNotRegular},
		{"/dev/null", 1 << 20, ErrNotRegular},
		{"/proc/self/status", 16, ErrTooLarge}, // stat says 0 bytes
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue // no /proc here
		}
		_, err := Read(c.path, c.max)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Read(%s, %d): %v; want %v naming the path", c.path, c.max, err, c.want)
		}
	}
	if err := Check(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Check(dir): %v", err)
	}
	if err := Check(ok); err != nil {
		t.Errorf("Check(%s): %v", ok, err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(missing): %v", err)
	}
}

// TestSize: the cap as a message shows it.
func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
