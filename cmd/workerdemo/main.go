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
//	go run ./cmd/workerdemo --work "20 seconds" --max-workers 4 --timeout 1m
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
	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/internal/tracing/export"
	"github.com/jetsched/jetsched/pkg/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// options are workerdemo's flags.
type options struct {
	conn                   natsconn.Options
	workflow, durable      string
	failRate               float64
	maxDeliver, maxWorkers int
	work, timeout, grace   time.Duration
	jsonLogs               bool
}

// parseArgs reads the flags; durations take the grammar of the scheduler's
// flags (internal/timearg: "20s", "2 minutes", "1h30m"). A bad flag is
// said on stderr by the flag package.
func parseArgs(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("workerdemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{grace: 30 * time.Second}
	fs.StringVar(&o.workflow, "workflow", "", "consume only the fires of one workflow, sched.fire.<workflow>.> (default: every workflow)")
	fs.StringVar(&o.durable, "durable", "workerdemo", "durable consumer name")
	fs.Float64Var(&o.failRate, "fail-rate", 0, "fraction of deliveries to fail on purpose (0 to 1), redelivered with backoff")
	fs.IntVar(&o.maxDeliver, "max-deliver", 5, "deliveries per fire before giving up")
	fs.IntVar(&o.maxWorkers, "max-workers", worker.DefaultMaxWorkers, "fires handled at once")
	fs.Var(timearg.FlagValue{P: &o.work}, "work", "how long each fire's simulated work takes, e.g. 20s or 2 minutes (ends early when cancelled)")
	fs.Var(timearg.FlagValue{P: &o.timeout}, "timeout", "bound on each fire's handler, e.g. 1m (0: none)")
	fs.Var(timearg.FlagValue{P: &o.grace}, "grace", "on a signal, how long to wait for running fires before cancelling them")
	fs.BoolVar(&o.jsonLogs, "json", false, "log JSON instead of colour text")
	o.conn.RegisterFlags(fs.StringVar, envOr("NATS_URL", natsconn.DefaultURL))
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if err := o.conn.Validate(); err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return options{}, err
	}
	return o, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return 2
	}
	conn := o.conn
	var log *slog.Logger
	if o.jsonLogs {
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
		JetStream: js, Durable: o.durable, Workflow: o.workflow, FailRate: o.failRate, MaxDeliver: o.maxDeliver,
		MaxWorkers: o.maxWorkers, Work: o.work, Timeout: o.timeout, Logger: log, TracerProvider: tp.TracerProvider,
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
	log.Info("stopping: waiting for running fires", "grace", o.grace)
	if err := stopGracefully(w, o.grace); err != nil {
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
