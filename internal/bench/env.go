package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/auditor"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scenario is one scenario's private layout on the shared NATS system: its
// own buckets, streams and subject prefix, deleted when it ends, so
// scenarios never see each other's records.
type scenario struct {
	r      *runner
	layout kvstore.Layout
	store  *jsstore.Store
	// audit is the trail of an audited scenario (nil: not audited).
	audit *benchAudit
}

func (r *runner) newScenario(ctx context.Context, name string) (*scenario, error) {
	r.seq++
	p := fmt.Sprintf("bench%d%s", r.seq, name)
	l := kvstore.NamedLayout(p)
	if err := jsstore.Setup(ctx, r.js, jsstore.SetupConfig{Layout: l, TickRetention: time.Hour, FireRetention: time.Hour, EventRetention: time.Hour}); err != nil {
		return nil, err
	}
	store, err := jsstore.Open(ctx, r.js, l)
	if err != nil {
		return nil, err
	}
	return &scenario{r: r, layout: l, store: store}, nil
}

// close deletes the scenario's buckets and streams.
func (s *scenario) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.closeAudit(ctx)
	l := s.layout
	for _, b := range []string{l.SpecsBucket, l.StateBucket, l.TicksBucket, l.WakeupsBucket, l.CalendarsBucket, l.LeasesBucket} {
		_ = s.r.js.DeleteKeyValue(ctx, b)
	}
	for _, st := range []string{l.FiresStream, l.WakeupsStream, l.EventsStream} {
		_ = s.r.js.DeleteStream(ctx, st)
	}
}

// startOne starts a scenario with one scheduler whose indexes are
// complete. The caller closes both.
func (r *runner) startOne(ctx context.Context, name string) (*scenario, *instance, error) {
	s, err := r.newScenario(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	in, err := s.startInstance(ctx, "bench-1")
	if err != nil {
		s.close()
		return nil, nil, err
	}
	if err := in.waitReady(ctx); err != nil {
		in.stop()
		s.close()
		return nil, nil, err
	}
	return s, in, nil
}

// instance is one scheduler (fire and wakeup engines) on its own
// connection, as a separate process would have.
type instance struct {
	nc     *nats.Conn
	fire   *fires.Engine
	timers *timers.Engine
	audit  *auditor.Auditor
}

func (s *scenario) startInstance(ctx context.Context, name string) (*instance, error) {
	nc, js, err := s.r.dial("jetsched bench " + name)
	if err != nil {
		return nil, err
	}
	in := &instance{nc: nc}
	store, err := jsstore.Open(ctx, js, s.layout)
	if err != nil {
		in.stop()
		return nil, err
	}
	slots, busy := fires.WindowFlags(s.r.cfg.WindowSlots, s.r.cfg.WindowBusy)
	if in.fire, err = fires.New(fires.Config{Store: store, Instance: name, Logger: s.r.cfg.Logger, Workers: s.r.cfg.Workers,
		WindowSlots: slots, WindowBusy: busy, FireQuantum: s.r.cfg.FireQuantum, RecordLag: fires.RecordLagFlag(s.r.cfg.RecordLag), StateInterval: s.r.cfg.StateInterval,
		EndedLists: s.r.cfg.EndedLists}); err != nil {
		in.stop()
		return nil, err
	}
	if err := in.fire.Start(ctx); err != nil {
		in.fire = nil
		in.stop()
		return nil, err
	}
	if in.timers, err = timers.New(timers.Config{Store: store, Owner: in.fire, Instance: name, Logger: s.r.cfg.Logger, Workers: s.r.cfg.TimerWorkers}); err != nil {
		in.stop()
		return nil, err
	}
	if err := in.timers.Start(ctx); err != nil {
		in.timers = nil
		in.stop()
		return nil, err
	}
	if s.audit != nil {
		if in.audit, err = s.startAuditor(ctx, name, store); err != nil {
			in.stop()
			return nil, err
		}
	}
	return in, nil
}

func (in *instance) stop() {
	if in.audit != nil {
		in.audit.Stop(context.Background())
	}
	if in.timers != nil {
		_ = in.timers.Stop(context.Background())
	}
	if in.fire != nil {
		_ = in.fire.Stop(context.Background())
	}
	in.nc.Close()
}

// waitReady waits for both indexes of the instance to be complete.
func (in *instance) waitReady(ctx context.Context) error {
	for _, ch := range []<-chan struct{}{in.fire.Ready(), in.timers.Ready()} {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the index: %w", ctx.Err())
		}
	}
	return nil
}

// putSpecs writes n specs through the bulk path: KV puts straight into the
// specs bucket (as `nats kv put` would; the scheduler's watch validates
// them), pipelined with one wait at the end.
func (s *scenario) putSpecs(ctx context.Context, n int, what string, spec func(i int) (string, kvstore.Spec)) error {
	return s.putAll(ctx, s.layout.SpecsBucket, n, what+": writing schedules", func(i int) (string, []byte, error) {
		id, sp := spec(i)
		data, err := sp.Encode()
		if err != nil {
			return "", nil, fmt.Errorf("encode spec %s: %w", id, err)
		}
		return id, data, nil
	})
}

// putStates writes n state records through the bulk path, as putSpecs.
func (s *scenario) putStates(ctx context.Context, n int, what string, state func(i int) (string, kvstore.State, error)) error {
	return s.putAll(ctx, s.layout.StateBucket, n, what+": writing state records", func(i int) (string, []byte, error) {
		id, st, err := state(i)
		if err != nil {
			return "", nil, err
		}
		data, err := st.Encode()
		if err != nil {
			return "", nil, fmt.Errorf("encode state %s: %w", id, err)
		}
		return id, data, nil
	})
}

// putAll writes n values of a bucket with pipelined KV puts, showing
// progress as "<show> i/n".
func (s *scenario) putAll(ctx context.Context, bucket string, n int, show string, value func(i int) (string, []byte, error)) error {
	subj := jsname.KVPrefix(s.r.js, bucket)
	for i := range n {
		id, data, err := value(i)
		if err != nil {
			return err
		}
		if err := s.r.publishAsync(ctx, &nats.Msg{Subject: subj + id, Data: data}); err != nil {
			return fmt.Errorf("put %s %s: %w", bucket, id, err)
		}
		if i%10_000 == 0 {
			s.r.progress("%s %d/%d", show, i, n)
		}
	}
	return s.r.flush(ctx)
}

// publishAsync sends m without waiting for its acknowledgement; when the
// window of unacknowledged publishes is full it waits for room (nats.go
// fails such a publish after a short stall) until ctx ends.
func (r *runner) publishAsync(ctx context.Context, m *nats.Msg) error {
	_, err := pipelined.Publish(ctx, r.js, m)
	return err
}

// flush waits until every pipelined publish is acknowledged.
func (r *runner) flush(ctx context.Context) error {
	select {
	case <-r.js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cpuSeconds is the process's user+system CPU time. With the embedded
// server it includes the server, the schedulers and the measuring worker.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// rssMiB is the process's resident set size from /proc (0 where there is
// no /proc).
func rssMiB() float64 { return statusMiB("self", "VmRSS") }

// statusMiB is field (VmRSS, VmHWM...) of /proc/<pid>/status in MiB (0
// where there is no /proc or no such field).
func statusMiB(pid, field string) float64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// writeHeapProfile writes a heap profile to path; an empty path writes none.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return f.Close()
}
