// Command workerdemo is an example jetsched worker: it binds a durable pull
// consumer to sched.fire.> (or one workflow), logs every fire with its
// headers and lateness, and acks it. With --fail-rate it fails some fires
// on purpose to show redelivery with backoff; with --work each fire takes
// that long (up to --max-workers at once, bounded by --timeout, cut short
// by a cancel_other schedule's next slot). On SIGINT/SIGTERM it stops
// fetching and waits --grace for running fires, then cancels them (they
// are nak'ed for redelivery).
//
//	go run ./cmd/workerdemo --nats-url nats://127.0.0.1:4222
//	go run ./cmd/workerdemo --workflow billing --fail-rate 0.3
//	go run ./cmd/workerdemo --work 20s --max-workers 4 --timeout 1m
//	go run ./cmd/workerdemo --nats-url nats://leaf:4222 --js-domain hub
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // zones resolve the same on every machine

	"github.com/lmittmann/tint"

	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/tracing/export"
	"github.com/jetsched/jetsched/pkg/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("workerdemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		conn     natsconn.Options
		workflow = fs.String("workflow", "", "consume only the fires of one workflow, sched.fire.<workflow>.> (default: every workflow)")
		durable  = fs.String("durable", "workerdemo", "durable consumer name")
		failRate = fs.Float64("fail-rate", 0, "fraction of deliveries to fail on purpose (0 to 1), redelivered with backoff")
		maxDel   = fs.Int("max-deliver", 5, "deliveries per fire before giving up")
		workers  = fs.Int("max-workers", worker.DefaultMaxWorkers, "fires handled at once")
		work     = fs.Duration("work", 0, "how long each fire's simulated work takes (ends early when cancelled)")
		timeout  = fs.Duration("timeout", 0, "bound on each fire's handler (0: none)")
		grace    = fs.Duration("grace", 30*time.Second, "on a signal, how long to wait for running fires before cancelling them")
		jsonLogs = fs.Bool("json", false, "log JSON instead of colour text")
	)
	conn.RegisterFlags(fs.StringVar, envOr("NATS_URL", natsconn.DefaultURL))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := conn.Validate(); err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 2
	}
	var log *slog.Logger
	if *jsonLogs {
		log = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		log = slog.New(tint.NewHandler(stderr, &tint.Options{TimeFormat: "15:04:05.000"}))
	}
	conn.Name = "jetsched workerdemo"
	conn.Logger = log
	nc, err := natsconn.Connect(conn)
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	defer nc.Close()
	js, err := natsconn.JetStream(nc, conn)
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	// Tracing as scheduler run's: the OTEL_* variables (off when none is set).
	tp, err := export.Setup(ctx, export.Options{Getenv: os.Getenv, ServiceName: "jetsched-workerdemo", Console: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 2
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tp.Shutdown(fctx); err != nil {
			log.Warn("tracing: spans not flushed at stop", "exporter", tp.Exporter, "err", err)
		}
	}()
	w, err := demoworker.New(demoworker.Config{
		JetStream: js, Durable: *durable, Workflow: *workflow, FailRate: *failRate, MaxDeliver: *maxDel,
		MaxWorkers: *workers, Work: *work, Timeout: *timeout, Logger: log, TracerProvider: tp.TracerProvider,
	})
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 2
	}
	// Handlers' contexts derive from Start's: not the signal's, so that a
	// signal stops gracefully rather than cancelling them at once.
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	<-ctx.Done()
	log.Info("stopping: waiting for running fires", "grace", *grace)
	if err := stopGracefully(w, *grace); err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	return 0
}

// stopGracefully waits up to grace for running handlers, then cancels
// them (their fires are nak'ed for redelivery) and waits as long again.
func stopGracefully(w *demoworker.Worker, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := w.Stop(ctx); err == nil {
		return nil
	}
	ctx, cancel = context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := w.StopAndCancel(ctx); err != nil {
		return fmt.Errorf("handlers still running after cancelling them: %w", err)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
