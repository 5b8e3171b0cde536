package natsembed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestStartRefusesAStoreInUse: a second server on a store directory that
// a running one uses is refused (ErrStoreLocked, naming the directory and
// the holder's pid) before it touches the store; the first keeps serving,
// and once it has shut down the directory can be used again. Two servers
// on one store corrupt its files (block data missing, a corrupt index).
func TestStartRefusesAStoreInUse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	first, err := Start(ctx, Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Shutdown()

	second, err := Start(ctx, Config{StoreDir: dir})
	if err == nil {
		second.Shutdown()
		t.Fatalf("a second server started on the store %s that another one uses", dir)
	}
	if !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("second start: %v; want ErrStoreLocked", err)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second start: %q does not name %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("lock file: %v", err)
	}

	// The first one is unharmed: it still serves JetStream.
	nc, err := nats.Connect(first.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("the first server after the refused second: %v", err)
	}
	nc.Close()

	first.Shutdown()
	third, err := Start(ctx, Config{StoreDir: dir})
	if err != nil {
		t.Fatalf("start after the holder shut down: %v", err)
	}
	third.Shutdown()
}
