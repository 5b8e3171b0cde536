// Package bench measures jetsched against the raw limit of its substrate:
// each scenario (baseline, steady, herd, scale, timers, fleet) runs on one
// NATS system, in its own bucket and stream layout, and every throughput is
// reported as a ratio to the baseline measured in the same run.
package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/memlimit"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsembed"
)

// Scenarios are the scenario names, in the order Run runs them.
// The native scenario runs the floor rows too (beside each @every row), so
// floor runs on its own only when native is not chosen.
var Scenarios = []string{"baseline", "steady", "herd", "native", "floor", "scale", "timers", "fleet", "restart"}

// Config sizes a run. The zero value of a size is the documented default.
type Config struct {
	// Conn reaches an existing NATS system; when URL is empty an embedded
	// server with file storage in DataDir is started.
	Conn natsconn.Options
	// DataDir is the embedded server's store. Default: a temporary
	// directory, removed afterwards.
	DataDir string
	// Only lists the scenarios to run (default: all of Scenarios).
	Only []string
	// Duration is how long steady and fleet measure. Default 10s.
	Duration time.Duration
	// BaselinePairs is how many CAS+publish pairs the baseline sends (and
	// how many messages its latency probe sends, at most 5,000).
	// Default 100,000.
	BaselinePairs int
	// Steady is the steady scenario's schedule counts, each firing every
	// second. Default 1,000, 10,000, 20,000 and 50,000 (half the pair rate
	// of a typical 2-core run: the largest finds the sustainable rate).
	Steady []int
	// Herd is how many schedules fall due in the same second. Default
	// 100,000. The native scenario (the NATS server's own @at message
	// schedules) uses the same count, and 100 a second for Duration.
	Herd int
	// Scale is how many schedules the scale scenario indexes. Default 1,000,000.
	Scale int
	// Timers is how many timers fall due within 10 s. Default 200,000.
	Timers int
	// TimerSpread is the time the timers fall due over. Default 10s.
	TimerSpread time.Duration
	// Binary is a scheduler executable: the fleet scenario runs its
	// instances as `Binary run` processes. Empty: in this process (each on
	// its own connection), as the tests do.
	Binary string
	// TimerWorkers is each scheduler's timer concurrency
	// (timers.Config.Workers). Default timers.DefaultWorkers.
	TimerWorkers int
	// WindowSlots and WindowBusy are each scheduler's --window-slots and
	// --window-busy (0: off, and always). Defaults fires.DefaultWindowSlots
	// and half the workers; the zero Config leaves window claims off.
	WindowSlots, WindowBusy int
	// FireQuantum is each scheduler's --fire-quantum (0: each slot
	// dispatched at its time).
	FireQuantum time.Duration
	// RecordLag is each scheduler's --record-lag (0: each one-shot's
	// record with its window).
	RecordLag time.Duration
	// StateInterval is each scheduler's --state-interval (0: each fire
	// recorded).
	StateInterval time.Duration
	// EndedLists is each scheduler's --ended-lists.
	EndedLists bool
	// GCPercent is the collector's GOGC in effect (set by the caller) and
	// GCSource where it came from; reported, and passed to the fleet's
	// processes.
	GCPercent int
	GCSource  string
	// GCHeadroom is passed to the `scheduler run` processes as
	// --gc-headroom ("": run's default).
	GCHeadroom string
	// MemoryLimit is the soft memory limit in effect (set by the caller),
	// reported.
	MemoryLimit memlimit.Decision
	// Workers is each scheduler's concurrency (fires.Config.Workers).
	// Default 32, as `scheduler run`.
	Workers int
	// Fleet is the steady scenario's schedule count for the fleet scenario
	// (run with 1, 2 and 3 instances). Default 10,000.
	Fleet int
	// Restart is the restart scenario's schedule count (each firing every
	// second on one scheduler, stopped with SIGTERM, then with SIGKILL,
	// and started again). Default 10,000.
	Restart int
	// Audit runs each steady count a second time with the audit duties of
	// an audited scheduler (digests of every fire checked against the
	// ledger, the external-change watch, anchored checkpoints) on the
	// scenario's own trail, with a random key, every 2s.
	Audit bool
	// MemProfile, when set, is a file the scale scenario writes its
	// scheduler's heap profile to when it measures RSS (the index
	// complete, after a GC): the process's (fetched from its
	// /debug/pprof/heap), or with ScaleInProcess this process's.
	MemProfile string
	// ScaleInProcess runs the scale scenario's scheduler in this process
	// even when Binary is set (to profile it; its RSS is then the whole
	// process's).
	ScaleInProcess bool
	// Rounds is how many times the scenarios after the baseline run, one
	// after the other in each round (herd, then native, then herd...), so
	// that a comparison with the server's own schedules is made several
	// times in one run and its spread shows (Report.Versus). Default 1.
	Rounds int
	// Contend, when above 0, runs every round twice: quiet, then with a
	// co-tenant burning this many cores (fractions allowed) while the
	// contended rows are measured (see Burn; a `scheduler bench --burn`
	// child process when Binary is set, else goroutines in this
	// process). Steady and @every rows have the co-tenant during their
	// measured seconds and report how soon they are back on time after it
	// stops; other scenarios have it throughout. The report gives the
	// capacity with and without it (Report.Capacity).
	Contend float64
	// LogDir, when set, keeps logs the bench otherwise discards: the
	// embedded server's notices, warnings and errors in
	// LogDir/nats-server.log (a slow consumer it closes is a notice), and
	// each 'scheduler run' process's log at info level in
	// LogDir/<scenario prefix>-<instance>.log. The directory must exist.
	LogDir string
	// Progress receives a progress line per scenario (nil: none).
	Progress io.Writer
	// Logger receives the schedulers' logs. Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Duration = cmp.Or(c.Duration, 10*time.Second)
	c.BaselinePairs = cmp.Or(c.BaselinePairs, 100_000)
	if len(c.Steady) == 0 {
		c.Steady = []int{1_000, 10_000, 20_000, 50_000}
	}
	c.Herd = cmp.Or(c.Herd, 100_000)
	c.Scale = cmp.Or(c.Scale, 1_000_000)
	c.Timers = cmp.Or(c.Timers, 200_000)
	c.Fleet = cmp.Or(c.Fleet, 10_000)
	c.Restart = cmp.Or(c.Restart, 10_000)
	c.TimerSpread = cmp.Or(c.TimerSpread, 10*time.Second)
	if len(c.Only) == 0 {
		c.Only = Scenarios
	}
	c.Rounds = max(c.Rounds, 1)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return c
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	for _, s := range c.Only {
		if !slices.Contains(Scenarios, s) {
			return fmt.Errorf("bench: scenario %q: unknown (want one of %s)", s, strings.Join(Scenarios, ", "))
		}
	}
	for _, n := range c.Steady {
		if n <= 0 {
			return fmt.Errorf("bench: steady count %d: must be positive", n)
		}
	}
	for name, n := range map[string]int{"herd": c.Herd, "scale": c.Scale, "timers": c.Timers, "fleet": c.Fleet, "restart": c.Restart, "baseline pairs": c.BaselinePairs} {
		if n < 0 {
			return fmt.Errorf("bench: %s count %d: must not be negative", name, n)
		}
	}
	if c.LogDir != "" {
		if fi, err := os.Stat(c.LogDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("bench: log dir %q: must be an existing directory", c.LogDir)
		}
	}
	if c.FireQuantum < 0 || c.FireQuantum > fires.MaxFireQuantum {
		return fmt.Errorf("bench: fire quantum %s: must be 0 to %s", c.FireQuantum, fires.MaxFireQuantum)
	}
	if c.WindowSlots < 0 || c.WindowBusy < 0 {
		return fmt.Errorf("bench: window slots %d, window busy %d: must not be negative", c.WindowSlots, c.WindowBusy)
	}
	if c.Workers < 0 {
		return fmt.Errorf("bench: workers %d: must not be negative", c.Workers)
	}
	if c.TimerWorkers < 0 {
		return fmt.Errorf("bench: timer workers %d: must not be negative", c.TimerWorkers)
	}
	if c.TimerSpread < 0 {
		return fmt.Errorf("bench: timer spread %s: must not be negative", c.TimerSpread)
	}
	if c.Duration < 0 {
		return fmt.Errorf("bench: duration %s: must not be negative", c.Duration)
	}
	if c.Rounds < 0 {
		return fmt.Errorf("bench: rounds %d: must not be negative", c.Rounds)
	}
	if !(c.Contend >= 0 && c.Contend <= MaxContend) {
		return fmt.Errorf("bench: contend %v: must be a number of cores from 0 to %d (fractions allowed)", c.Contend, MaxContend)
	}
	return nil
}

// Report is a whole run.
type Report struct {
	Started  time.Time `json:"started"`
	Machine  Machine   `json:"machine"`
	Embedded bool      `json:"embedded_server"`
	// BaselinePairsPerSec is the reference every Ratio divides by.
	BaselinePairsPerSec float64 `json:"baseline_pairs_per_sec"`
	// BaselineTriplesPerSec adds the ledger put a fire also writes: the
	// ceiling of a fire path that makes three writes per fire.
	BaselineTriplesPerSec float64 `json:"baseline_triples_per_sec"`
	// Windows says how the schedulers claimed slots (window claims, and
	// from how many busy workers, or one CAS per slot).
	Windows string `json:"windows"`
	// GC is the collector setting of the run (GOGC and its source).
	GC      string   `json:"gc"`
	Results []Result `json:"results"`
	// Versus sets each row beside the row of the server's own schedules
	// it is measured against in the same round (see versus).
	Versus []Versus `json:"versus,omitempty"`
	// Contention is the co-tenant of a run with Config.Contend (nil:
	// none).
	Contention *Contention `json:"contention,omitempty"`
	// Capacity is, for jetsched and for the server's own @every
	// schedules, with and without the co-tenant, the largest steady rate
	// measured that held (see capacity).
	Capacity []Capacity `json:"capacity,omitempty"`
}

// Result is one measured row. Zero fields were not measured by that
// scenario.
type Result struct {
	Scenario string `json:"scenario"`
	// Round is the round the row was measured in (Config.Rounds; 0 when
	// there was one).
	Round int `json:"round,omitempty"`
	// ContendCores is the co-tenant's cores while the row was measured
	// (Config.Contend; 0: quiet).
	ContendCores float64 `json:"contend_cores,omitempty"`
	// AfterP99MsBySecond is, for a contended steady or @every row, the
	// p99 lateness of the slots scheduled in each second after the
	// co-tenant stopped, and AfterMsBySecond their greatest. BackOnTime
	// is when the p99 stayed under 50 ms from ("N s" after it stopped, or
	// "never" within those seconds): the lateness a steady rate is held
	// at (capacity). BackOnTimeWorst is the same for the greatest, a
	// stricter rule that quiet rows at 10,000 a second do not always meet
	// either (a collection of the server's duplicate-window map can hold
	// one slot 50 ms).
	AfterP99MsBySecond []float64 `json:"after_p99_ms_by_second,omitempty"`
	AfterMsBySecond    []float64 `json:"after_ms_by_second,omitempty"`
	BackOnTime         string    `json:"back_on_time,omitempty"`
	BackOnTimeWorst    string    `json:"back_on_time_worst,omitempty"`
	// Peer names what the row is compared on, the same for jetsched's row
	// and the server's own schedules' row: "herd <n>" (all due in the
	// same second, @at) or "steady <n>" (n schedules each every second,
	// @every; the publish floor's row at n has it too).
	Peer      string  `json:"peer,omitempty"`
	Label     string  `json:"label"`
	Count     int     `json:"count"`
	Instances int     `json:"instances,omitempty"`
	PerSec    float64 `json:"per_sec"`
	// Ratio is PerSec divided by the baseline pair rate.
	Ratio float64 `json:"ratio_to_baseline"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// MaxMsBySecond is the greatest lateness of the slots scheduled in
	// each whole second measured (steady, fleet, timers: where a tail
	// comes from, a burst every few seconds or a slow start).
	MaxMsBySecond []float64 `json:"max_ms_by_second,omitempty"`
	// P99MsBySecond is each of those seconds' p99 lateness: what a
	// contended row's seconds after its co-tenant (AfterP99MsBySecond)
	// compare with.
	P99MsBySecond []float64 `json:"p99_ms_by_second,omitempty"`
	CPUPer1k      float64   `json:"cpu_sec_per_1k,omitempty"`
	Duplicates    int       `json:"duplicates"`
	Gaps          int       `json:"gaps"`
	// Seconds is the scenario's headline duration (drain time, index time).
	Seconds float64 `json:"seconds,omitempty"`
	// FirstFireSec is the time from start to the first fire (scale: of a
	// schedule due at start).
	FirstFireSec float64 `json:"first_fire_sec,omitempty"`
	// AllDueSec is the time from start until every schedule due at start
	// fired (scale).
	AllDueSec float64 `json:"all_due_sec,omitempty"`
	// RecordedSec is the time from the due second until every state
	// record of the herd was written, and CPUPer1kRecorded the CPU per
	// 1,000 fires until then (herd: records of one-shots may follow
	// their fires, see fires.Config.RecordLag).
	RecordedSec      float64 `json:"recorded_sec,omitempty"`
	CPUPer1kRecorded float64 `json:"cpu_sec_per_1k_recorded,omitempty"`
	RSSMiB           float64 `json:"rss_mib,omitempty"`
	IdleCPU          float64 `json:"idle_cpu_cores,omitempty"`
	Note             string  `json:"note,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go"`
	OS        string `json:"os"`
}

// Run runs the configured scenarios. Baseline always runs first (other
// scenarios need its rate for their ratios).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &runner{cfg: cfg, rep: &Report{Started: time.Now().UTC(), Machine: machine(), Windows: windowsOf(cfg),
		GC: fmt.Sprintf("GOGC %d (%s), memory limit %s", cfg.GCPercent, cmp.Or(cfg.GCSource, "default"), limitOf(cfg.MemoryLimit))}}
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	defer r.close()

	base, err := r.baseline(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: baseline: %w", err)
	}
	r.rep.BaselinePairsPerSec, r.rep.BaselineTriplesPerSec = base[0].PerSec, base[1].PerSec
	r.add(base...)
	steps := map[string]func(context.Context) ([]Result, error){
		"steady": r.steady, "herd": r.herd, "native": r.native, "floor": r.floor, "scale": r.scale, "timers": r.timers,
		"fleet": r.fleet, "restart": r.restart,
	}
	passes := []*contender{nil}
	if cfg.Contend > 0 {
		c := newContender(cfg.Contend, cfg.Binary)
		r.rep.Contention = c.rep
		passes = append(passes, c)
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, c := range passes {
			r.cont = c
			if err := r.round(ctx, round, steps); err != nil {
				return r.rep, err
			}
		}
	}
	r.cont = nil
	r.rep.Versus = versus(r.rep.Results)
	r.rep.Capacity = capacity(r.rep.Results)
	return r.rep, nil
}

// round runs the configured scenarios once, contended when r.cont is set:
// steady, native and floor start and stop the co-tenant themselves
// (around their measured seconds), the others have it throughout.
func (r *runner) round(ctx context.Context, round int, steps map[string]func(context.Context) ([]Result, error)) error {
	for _, name := range Scenarios[1:] {
		if !chosen(r.cfg.Only, name) {
			continue
		}
		step := func() ([]Result, error) { return steps[name](ctx) }
		var res []Result
		var err error
		if name == "steady" || name == "native" || name == "floor" {
			res, err = step()
		} else {
			res, err = during(r.cont, step)
		}
		if err != nil {
			return fmt.Errorf("bench: %s: %w", name, err)
		}
		for i := range res {
			if r.cfg.Rounds > 1 {
				res[i].Round = round
			}
			if r.cont != nil {
				res[i].ContendCores = r.cont.rep.Cores
				res[i].Label += coTenant(r.cont.rep.Cores)
			}
		}
		r.add(res...)
	}
	return nil
}

// chosen reports whether the scenario name runs as a step of its own
// when only are chosen: the floor does not when native, which runs it
// beside each @every row, is chosen too.
func chosen(only []string, name string) bool {
	return slices.Contains(only, name) && !(name == "floor" && slices.Contains(only, "native"))
}

// runner holds the NATS system a run uses.
type runner struct {
	cfg Config
	rep *Report
	srv *natsembed.Server
	log *os.File // the embedded server's log (Config.LogDir)
	tmp string
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
	seq int
	// cont is the co-tenant of the pass being run (nil: a quiet pass).
	cont *contender
}

func (r *runner) add(res ...Result) {
	for _, x := range res {
		if r.rep.BaselinePairsPerSec > 0 && x.PerSec > 0 {
			x.Ratio = x.PerSec / r.rep.BaselinePairsPerSec
		}
		r.rep.Results = append(r.rep.Results, x)
	}
}

func (r *runner) connect(ctx context.Context) (err error) {
	if r.cfg.Conn.URL == "" {
		r.rep.Embedded = true
		dir := r.cfg.DataDir
		if dir == "" {
			if r.tmp, err = os.MkdirTemp("", "jetsched-bench-"); err != nil {
				return fmt.Errorf("bench: data dir: %w", err)
			}
			dir = r.tmp
		}
		var log *slog.Logger
		if log, err = r.serverLog(); err != nil {
			return err
		}
		if r.srv, err = natsembed.Start(ctx, natsembed.Config{StoreDir: dir, Name: "jetsched-bench", Logger: log}); err != nil {
			return fmt.Errorf("bench: embedded nats-server: %w", err)
		}
		r.url = r.srv.ClientURL()
	} else {
		r.url = r.cfg.Conn.URL
	}
	r.nc, r.js, err = r.dial("jetsched bench")
	return err
}

// dial opens a new connection to the run's NATS system.
func (r *runner) dial(name string) (*nats.Conn, jetstream.JetStream, error) {
	o := r.cfg.Conn
	o.URL = r.url
	o.Name = name
	nc, err := natsconn.Connect(o)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: connect %s: %w", r.url, err)
	}
	js, err := natsconn.JetStream(nc, o)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return nc, js, nil
}

func (r *runner) close() {
	if r.nc != nil {
		r.nc.Close()
	}
	if r.srv != nil {
		r.srv.Shutdown()
	}
	if r.log != nil {
		_ = r.log.Close()
	}
	if r.tmp != "" {
		_ = os.RemoveAll(r.tmp)
	}
}

// serverLog is the embedded server's logger: nil (discard) unless
// Config.LogDir is set. natsembed passes the server's notices at debug.
func (r *runner) serverLog() (*slog.Logger, error) {
	if r.cfg.LogDir == "" {
		return nil, nil
	}
	f, err := r.logFile("nats-server")
	if err != nil {
		return nil, err
	}
	r.log = f
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), nil
}

// logFile creates (or appends to) LogDir/name.log.
func (r *runner) logFile(name string) (*os.File, error) {
	p := filepath.Join(r.cfg.LogDir, name+".log")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("bench: log file: %w", err)
	}
	return f, nil
}

// progress prints a progress line (overwritten in place on a terminal).
func (r *runner) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "\r\033[K"+format, args...)
	}
}

func (r *runner) progressDone() {
	if r.cfg.Progress != nil {
		fmt.Fprint(r.cfg.Progress, "\r\033[K")
	}
}

// windowsOf describes cfg's window claims for the report.
func windowsOf(cfg Config) string {
	switch {
	case cfg.WindowSlots == 0:
		return "off: one claim CAS per slot"
	case cfg.WindowBusy == 0:
		return fmt.Sprintf("window claims of up to %d slots, always", cfg.WindowSlots)
	}
	records := "a window's one-shots recorded with it"
	if cfg.RecordLag > 0 {
		records = fmt.Sprintf("a window's one-shots recorded after due work, within %s", cfg.RecordLag)
	}
	if cfg.EndedLists {
		records += " (as ended lists)"
	}
	if cfg.StateInterval > 0 {
		records += fmt.Sprintf("; recurring schedules' records once per %s", cfg.StateInterval)
	}
	return fmt.Sprintf("window claims of up to %d slots once %d workers are busy; %s", cfg.WindowSlots, cfg.WindowBusy, records)
}

// limitOf describes a memory limit decision for the report.
func limitOf(d memlimit.Decision) string {
	if d.Limit <= 0 {
		return "none (" + cmp.Or(d.Source, "not set") + ")"
	}
	return fmt.Sprintf("%d MiB (%s)", d.Limit>>20, d.Source)
}
