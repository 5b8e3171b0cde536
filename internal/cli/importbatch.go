package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/admin"
)

// importInFlight is how many schedule.import requests the CLI keeps in
// flight: the API answers one while the next is on its way.
const importInFlight = 4

// importEnvelope is what a schedule.import request adds around its
// items, with room for the headers: a batch's items stay under the max
// payload less this.
const importEnvelope = 8 << 10

// importBatch is one schedule.import request's items: their encoded
// forms and where they start in the file.
type importBatch struct {
	first int
	ids   []string
	items []json.RawMessage
}

// importBatches splits items into requests of at most
// admin.ImportItemsFor(maxPayload) items whose encoding stays under the
// max payload; an item too large to share a request goes alone (and the
// API refuses it if it does not fit at all).
func importBatches(items []importItem, maxPayload int64) ([]importBatch, error) {
	limit := admin.ImportItemsFor(maxPayload)
	budget := max(maxPayload-importEnvelope, 1)
	var out []importBatch
	var cur importBatch
	size := int64(0)
	for i, it := range items {
		raw, err := json.Marshal(admin.ImportItem{ID: it.ID, Spec: it.Spec})
		if err != nil {
			return nil, usageError{fmt.Errorf("item %d (id %q): %w", i+1, it.ID, err)}
		}
		if len(cur.items) > 0 && (len(cur.items) == limit || size+int64(len(raw))+1 > budget) {
			out = append(out, cur)
			cur, size = importBatch{}, 0
		}
		if len(cur.items) == 0 {
			cur.first = i
		}
		cur.ids = append(cur.ids, it.ID)
		cur.items = append(cur.items, raw)
		size += int64(len(raw)) + 1
	}
	if len(cur.items) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// body is the batch's schedule.import request.
func (b importBatch) body(check bool) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	for i, raw := range b.items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(raw)
	}
	buf.WriteString("]")
	if check {
		buf.WriteString(`,"check":true`)
	}
	buf.WriteString("}")
	return buf.Bytes()
}

// importFailure is an item the API refused (or whose request failed).
type importFailure struct {
	item int // 0-based, in the file
	id   string
	err  admin.Error
}

// importTally is what one pass over the batches did.
type importTally struct {
	saved, unchanged int
	failures         []importFailure // the refused in file order, then the not_written
}

// importPass sends every batch (check: for the API to check only), a
// few at a time, and tallies the results. Unless keepGoing (or check),
// it sends no batch after one with a failure; the batches in flight
// finish. A request that fails fails its items.
func (a *app) importPass(ctx context.Context, nc *nats.Conn, batches []importBatch, total int, check, keepGoing bool) (importTally, error) {
	verb := "imported"
	if check {
		verb = "checked"
	}
	prog := newProgress(a.stderr, verb, total)
	var (
		mu      sync.Mutex
		t       importTally
		stopped bool
	)
	next := make(chan importBatch)
	var wg sync.WaitGroup
	for range min(importInFlight, len(batches)) {
		wg.Go(func() {
			for b := range next {
				var resp admin.ImportResponse
				err := a.request(ctx, nc, "schedule.import", b.body(check), &resp)
				if err == nil && len(resp.Results) != len(b.items) {
					err = fmt.Errorf("admin API schedule.import: %d results for %d items", len(resp.Results), len(b.items))
				}
				mu.Lock()
				for i := range b.items {
					switch {
					case err != nil:
						t.failures = append(t.failures, importFailure{item: b.first + i, id: b.ids[i], err: requestError(err)})
					case resp.Results[i].Error != nil:
						t.failures = append(t.failures, importFailure{item: b.first + i, id: resp.Results[i].ID, err: *resp.Results[i].Error})
					case resp.Results[i].Unchanged:
						t.unchanged++
					default:
						t.saved++
					}
				}
				stopped = stopped || len(t.failures) > 0 && !keepGoing
				mu.Unlock()
				prog.add(len(b.items))
			}
		})
	}
	stopProgress := prog.run(ctx)
	for _, b := range batches {
		mu.Lock()
		stop := stopped
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		select {
		case next <- b:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	stopProgress()
	// The refused items first, in file order; then those left unwritten
	// because of them.
	slices.SortFunc(t.failures, func(x, y importFailure) int {
		xw, yw := x.err.Code == admin.CodeNotWritten, y.err.Code == admin.CodeNotWritten
		if xw != yw {
			if xw {
				return 1
			}
			return -1
		}
		return x.item - y.item
	})
	if err := ctx.Err(); err != nil {
		return t, fmt.Errorf("import interrupted: %w", err)
	}
	return t, nil
}

// requestError is a failed request's error as an item's.
func requestError(err error) admin.Error {
	code := admin.CodeInternal
	var ue usageError
	if errors.As(err, &ue) {
		code = admin.CodeInvalid
	}
	return admin.Error{Code: code, Message: describe(err)}
}

// maxReported is how many failures an import lists on standard error
// besides the one it exits with.
const maxReported = 20

// reportFailures lists failures on standard error, the first
// maxReported of them.
func (a *app) reportFailures(fs []importFailure) {
	for i, f := range fs {
		if i == maxReported {
			fmt.Fprintf(a.stderr, "... and %d more item(s) refused\n", len(fs)-i)
			return
		}
		fmt.Fprintln(a.stderr, f.message())
	}
}

func (f importFailure) message() string {
	msg := f.err.Message
	if f.err.Code == admin.CodeInvalid && f.err.Field != "" && !strings.Contains(msg, f.err.Field) {
		msg = "field " + f.err.Field + ": " + msg
	}
	return fmt.Sprintf("item %d (id %q): %s", f.item+1, f.id, msg)
}

// itemFailure is the command's error for failure f, with what it meant
// for the import: invalid input and static schedules exit 2, a conflict
// 3, the rest 1.
func itemFailure(f importFailure, outcome string) error {
	err := fmt.Errorf("%s; %s", f.message(), outcome)
	switch f.err.Code {
	case admin.CodeInvalid, admin.CodeStatic:
		return usageError{err}
	case admin.CodeConflict:
		return conflictError{err.Error()}
	}
	return err
}

// progress shows an import's count, rate and ETA on a terminal, a line
// redrawn a few times a second, and its final line wherever w goes.
type progress struct {
	w     io.Writer
	tty   bool
	verb  string
	total int
	start time.Time
	mu    sync.Mutex
	done  int
}

func newProgress(w io.Writer, verb string, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), verb: verb, total: total, start: time.Now()}
}

func (p *progress) add(n int) {
	p.mu.Lock()
	p.done += n
	p.mu.Unlock()
}

// run redraws the line on a terminal until the returned stop, which
// writes the final line.
func (p *progress) run(ctx context.Context) (stop func()) {
	end := make(chan struct{})
	var wg sync.WaitGroup
	if p.tty {
		wg.Go(func() {
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-end:
					return
				case <-tick.C:
					p.draw(false)
				}
			}
		})
	}
	return func() {
		close(end)
		wg.Wait()
		p.draw(true)
	}
}

// draw writes the line: "imported 12000/100000  8,000/s  ETA 10s", or at
// the end "imported 100000/100000  8,000/s  in 12.5s".
func (p *progress) draw(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.done) / elapsed.Seconds()
	}
	line := fmt.Sprintf("%s %d/%d  %.0f/s", p.verb, p.done, p.total, rate)
	switch {
	case final:
		line += "  in " + elapsed.Round(100*time.Millisecond).String()
	case rate > 0:
		eta := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
		line += "  ETA " + eta.Round(time.Second).String()
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprint(p.w, line)
	}
	if final {
		fmt.Fprintln(p.w)
	}
}
