package cli

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/tracing/export"
)

// serviceName is service.name of the scheduler's spans unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
const serviceName = "jetsched-scheduler"

// tracingFlush bounds the flush of the spans not yet exported at stop.
const tracingFlush = 10 * time.Second

// withTracing runs run(ctx, cfg) with the TracerProvider the OTEL_*
// environment variables ask for (docs/tracing.md; off when none is set),
// and flushes it after run returns, waiting for the flush. A bad variable
// is a usage error naming it. Console spans go to console.
func withTracing(ctx context.Context, cfg *daemon.Config, console io.Writer, run func(context.Context, daemon.Config) error) error {
	p, err := export.Setup(ctx, export.Options{Getenv: os.Getenv, ServiceName: serviceName, Console: console})
	if err != nil {
		return usageError{err}
	}
	cfg.TracerProvider = p.TracerProvider
	cfg.Logger.Info("tracing", "exporter", p.Exporter)
	runErr := run(ctx, *cfg)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlush)
	defer cancel()
	if err := p.Shutdown(fctx); err != nil {
		cfg.Logger.Warn("tracing: spans not flushed at stop", "exporter", p.Exporter, "err", err)
	}
	return runErr
}
