// Package startwait bounds and reports the waits of a start: each step of
// a scheduler's start (stream and bucket setup, the watches, the first
// lease round) runs under a deadline, and one that takes longer than a
// second is logged at info, naming what it waits for, so that a start on a
// busy box says where its time goes instead of going quiet for minutes.
package startwait

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Slow is how long a step may take before it is logged at info.
const Slow = time.Second

// Step runs f with a context that ends after limit (0: no deadline of its
// own, ctx's), and logs at info when it has taken Slow ("start: waiting",
// with what it waits for) and when such a slow step ends ("start: waited",
// with how long). An f that ran out of its limit returns an error naming
// what and the limit.
func Step(ctx context.Context, log *slog.Logger, what string, limit time.Duration, f func(context.Context) error) error {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	start := time.Now()
	slow := time.AfterFunc(Slow, func() {
		log.LogAttrs(ctx, slog.LevelInfo, "start: waiting", slog.String("for", what), slog.Duration("waited", time.Since(start).Round(time.Millisecond)))
	})
	err := f(ctx)
	took := time.Since(start)
	if !slow.Stop() {
		log.LogAttrs(ctx, slog.LevelInfo, "start: waited", slog.String("for", what), slog.Duration("took", took.Round(time.Millisecond)), slog.Bool("ok", err == nil))
	}
	if err != nil && limit > 0 && errors.Is(err, context.DeadlineExceeded) && took >= limit {
		return fmt.Errorf("start: %s: not done within %s: %w", what, limit, err)
	}
	return err
}

// Watchdog logs at info, while ready is open, what a start still waits for
// (pending, called on the watchdog's goroutine: it must be safe for that)
// after Slow, then at doubling intervals up to every 30 s, until ready
// closes or ctx ends. It returns at once; the goroutine ends with them.
func Watchdog(ctx context.Context, log *slog.Logger, msg string, ready <-chan struct{}, pending func() []string) {
	go func() {
		start := time.Now()
		wait := Slow
		t := time.NewTimer(wait)
		defer t.Stop()
		for {
			select {
			case <-ready:
				if d := time.Since(start); d >= Slow {
					log.LogAttrs(ctx, slog.LevelInfo, msg+": done", slog.Duration("took", d.Round(time.Millisecond)))
				}
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			log.LogAttrs(ctx, slog.LevelInfo, msg+": waiting", slog.Any("for", pending()), slog.Duration("waited", time.Since(start).Round(time.Millisecond)))
			wait = min(2*wait, 30*time.Second)
			t.Reset(wait)
		}
	}()
}
