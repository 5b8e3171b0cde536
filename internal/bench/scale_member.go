package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/nats-io/nats.go"
)

// scaleMember is the scale scenario's scheduler: a `scheduler run`
// process when the run has the binary (so that its memory is measured
// alone, as the target reads), else an instance in this process.
type scaleMember interface {
	member
	// waitReady waits until the due indexes are complete.
	waitReady(ctx context.Context) error
	// rss is the scheduler's resident set now and its peak so far, in MiB,
	// and what they cover.
	rss() (now, peak float64, what string)
	// cpu is the CPU the scheduler has used so far, in seconds.
	cpu() float64
	// writeHeap writes the scheduler's heap profile to path ("": none).
	writeHeap(ctx context.Context, path string) error
	// listings waits until the scheduler's admin API lists schedules (its
	// catalogue, loaded after the index, is complete); false: it has none.
	listings(ctx context.Context) (bool, error)
	// compiled waits until the scheduler has compiled every spec (some
	// are compiled after the index is ready: docs/protocol.md, "Compiled
	// on approach"), and says how the scheduler's loop answered meanwhile:
	// its slowest health answer, and how many did not come within the
	// metrics' 2 s.
	compiled(ctx context.Context) (pollStats, error)
}

// startScaleMember starts the scale scenario's scheduler.
func (s *scenario) startScaleMember(ctx context.Context) (scaleMember, error) {
	if s.r.cfg.Binary == "" || s.r.cfg.ScaleInProcess {
		in, err := s.startInstance(ctx, "bench-1")
		if err != nil {
			return nil, err
		}
		return inProcess{in}, nil
	}
	addr, err := loopbackAddr()
	if err != nil {
		return nil, err
	}
	p, err := s.startProcess("bench-1", "--metrics-listen", addr, "--pprof")
	if err != nil {
		return nil, err
	}
	return &readyProcess{process: p, base: "http://" + addr, nc: s.r.nc, api: s.layout.Prefix + ".api."}, nil
}

// loopbackAddr is a free TCP address on 127.0.0.1 for a child to listen on.
func loopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// inProcess is the scale scheduler as an instance of this process: its
// memory is the whole process's (server and writer included).
type inProcess struct{ *instance }

func (in inProcess) rss() (now, peak float64, what string) {
	runtime.GC()
	return rssMiB(), statusMiB("self", "VmHWM"), "bench process: server, writer and scheduler"
}

func (in inProcess) cpu() float64 { return cpuSeconds() }

func (in inProcess) writeHeap(_ context.Context, path string) error { return writeHeapProfile(path) }

func (in inProcess) listings(context.Context) (bool, error) { return false, nil } // engine and timers only

func (in inProcess) compiled(ctx context.Context) (pollStats, error) {
	var st pollStats
	err := st.poll(ctx, "the scheduler's compiles", func() bool {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		h, err := in.fire.Health(hctx, time.Hour)
		st.unanswered += btoi(err != nil)
		return err == nil && h.Uncompiled == 0
	})
	return st, err
}

// readyProcess is the scale scheduler as a `scheduler run` process, ready
// when its /readyz answers 200, its profiles under base/debug/pprof/.
type readyProcess struct {
	*process
	base string
	nc   *nats.Conn
	api  string // the admin API's subject prefix
}

func (p *readyProcess) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	tk := time.NewTicker(50 * time.Millisecond)
	defer tk.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err // stop() waits on it too
			return fmt.Errorf("bench: the scheduler process exited before its index was complete: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the index of the scheduler process: %w", ctx.Err())
		case <-tk.C:
		}
	}
}

func (p *readyProcess) listings(ctx context.Context) (bool, error) {
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	for {
		msg, err := p.nc.Request(p.api+"schedule.list", []byte(`{"limit":1}`), 10*time.Second)
		if err == nil && msg.Header.Get("Nats-Service-Error-Code") == "" {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("waiting for the scheduler process's listings: %w", ctx.Err())
		case <-tk.C:
		}
	}
}

func (p *readyProcess) rss() (now, peak float64, what string) {
	now, peak = p.rssMiB()
	return now, peak, "scheduler process alone"
}

func (p *readyProcess) cpu() float64 { return p.cpuSeconds() }

// writeHeap fetches the process's heap profile (after a collection).
func (p *readyProcess) writeHeap(ctx context.Context, path string) error {
	if path == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("heap profile of the scheduler process: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile of the scheduler process: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return f.Close()
}

// compiled polls the process's /metrics until it reports every spec
// compiled (each scrape walks the scheduler's million entries: once a
// second, as a scraper would, not faster).
func (p *readyProcess) compiled(ctx context.Context) (pollStats, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	var st pollStats
	err := st.poll(ctx, "the scheduler process's compiles", func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			st.unanswered++
			return false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		// The health gauges are left out of a scrape the loop did not
		// answer within 2 s.
		st.unanswered += btoi(err != nil || !bytes.Contains(body, []byte("\njetsched_specs_uncompiled ")))
		return err == nil && bytes.Contains(body, []byte("\njetsched_specs_uncompiled 0\n"))
	})
	return st, err
}

// pollStats is how a polled scheduler answered: its slowest answer and
// how many did not come in time.
type pollStats struct {
	slowest    time.Duration
	unanswered int
}

// poll calls done every second until it reports true or ctx ends, timing
// each call.
func (st *pollStats) poll(ctx context.Context, what string, done func() bool) error {
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	for {
		t0 := time.Now()
		ok := done()
		st.slowest = max(st.slowest, time.Since(t0))
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tk.C:
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
