// Command workerdemo is an example jetsched worker: it binds a durable pull
// consumer to sched.fire.> (or one workflow), logs every fire with its
// headers and lateness, and acks it. With --fail-rate it fails some fires
// on purpose to show redelivery with backoff.
//
//	go run ./cmd/workerdemo --nats-url nats://127.0.0.1:4222
//	go run ./cmd/workerdemo --workflow billing --fail-rate 0.3
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
	_ "time/tzdata" // zones resolve the same on every machine

	"github.com/lmittmann/tint"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/demoworker"
	"github.com/jetsched/jetsched/internal/natsconn"
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
		workflow = fs.String("workflow", "", "consume only sched.fire.<workflow> (default: every workflow)")
		durable  = fs.String("durable", "workerdemo", "durable consumer name")
		failRate = fs.Float64("fail-rate", 0, "fraction of deliveries to fail on purpose (0 to 1), redelivered with backoff")
		maxDel   = fs.Int("max-deliver", 5, "deliveries per fire before giving up")
		jsonLogs = fs.Bool("json", false, "log JSON instead of colour text")
	)
	conn.RegisterFlags(fs.StringVar, envOr("NATS_URL", natsconn.DefaultURL))
	if err := fs.Parse(args); err != nil {
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
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	w, err := demoworker.New(demoworker.Config{
		JetStream: js, Durable: *durable, Workflow: *workflow, FailRate: *failRate, MaxDeliver: *maxDel, Logger: log,
	})
	if err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 2
	}
	if err := w.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "workerdemo:", err)
		return 1
	}
	<-ctx.Done()
	log.Info("stopping: draining in-flight fires")
	w.Stop()
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
