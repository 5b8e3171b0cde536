// Command scheduler is jetsched's daemon and admin CLI. See `scheduler
// --help`; the commands live in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // zones resolve the same on every machine

	"github.com/jetsched/jetsched/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
