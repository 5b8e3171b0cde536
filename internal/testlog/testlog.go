// Package testlog has slog handlers for tests that wait for something to
// be logged instead of guessing how long it takes.
package testlog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
)

// Signal is a handler that sends on Seen (without blocking; it holds one)
// each time a record's message contains Match. Other records are dropped.
type Signal struct {
	Match string
	Seen  chan struct{}
}

// NewSignal returns a Signal for match.
func NewSignal(match string) Signal { return Signal{Match: match, Seen: make(chan struct{}, 1)} }

// Logger is a logger writing to s.
func (s Signal) Logger() *slog.Logger { return slog.New(s) }

// Enabled reports true for every level: debug records count.
func (s Signal) Enabled(context.Context, slog.Level) bool { return true }

// Handle signals a matching record.
func (s Signal) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, s.Match) {
		select {
		case s.Seen <- struct{}{}:
		default:
		}
	}
	return nil
}

// WithAttrs returns s: attributes do not matter to the match.
func (s Signal) WithAttrs([]slog.Attr) slog.Handler { return s }

// WithGroup returns s.
func (s Signal) WithGroup(string) slog.Handler { return s }

// Buffer is a log destination that goroutines may share: a bytes.Buffer
// behind a mutex.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Multi is a handler that hands every record to each of its handlers.
type Multi []slog.Handler

// Enabled reports true for every level.
func (m Multi) Enabled(context.Context, slog.Level) bool { return true }

// Handle hands r to each handler.
func (m Multi) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range m {
		_ = h.Handle(ctx, r.Clone())
	}
	return nil
}

// WithAttrs returns m.
func (m Multi) WithAttrs([]slog.Attr) slog.Handler { return m }

// WithGroup returns m.
func (m Multi) WithGroup(string) slog.Handler { return m }
