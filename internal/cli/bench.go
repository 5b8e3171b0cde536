package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/bench"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/memlimit"
	"github.com/jetsched/jetsched/internal/timers"
)

func (a *app) benchCommand() *cobra.Command {
	var (
		cfg          bench.Config
		burn         float64
		out          string
		profile      string
		allocProfile string
		memoryLimit  string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure throughput, fire lateness, memory and startup against the raw JetStream limit",
		Long: `Measure jetsched on an embedded nats-server with file storage (or on
--nats-url). Scenarios, in order:

  baseline  pipelined KV CAS + async publish pairs per second (the reference
            of every ratio), the same with a ledger put (a fire's three
            writes), and publish-to-consumer latency p50/p99
  steady    N schedules each firing every second, spread over the second
  herd      N schedules due in the same second: time to drain, lateness
  native    the NATS server's own message schedules, the peer: a herd of
            @at, 100/s @at, and each steady count up to 10,000 @every 1s,
            each followed by the floor row of that count
  floor     the publish floor, alone when native is not chosen: a plain
            publisher sending the steady count's fires in --fire-quantum
            quanta, no KV, no claims (the least a client-side scheduler
            pays), compared with @every in the same round
  scale     N schedules written through the bulk path, then a scheduler
            start: time to first fire, to a complete index, RSS, idle CPU
  timers    N timers due within 10 s: lateness and throughput
  fleet     steady with 1, 2 and 3 'scheduler run' processes
  restart   steady on one 'scheduler run' process, stopped (SIGTERM, then
            SIGKILL) and started again: lateness by second after the
            stop, every slot once

Every scenario runs in its own buckets and streams (prefix benchN...),
deleted afterwards, so --nats-url never touches the sched_* records.
With --audit, each steady count runs a second time with the audit duties
on (dispatch digests with their ledger checks, the external-change watch,
anchored checkpoints), on the scenario's own trail.
With --contend N, every round runs twice, the second time beside a
co-tenant process burning N cores: each steady rate quiet and contended,
how soon it is back on time once the co-tenant stops, and the capacity
(the largest steady rate held at p99 under 50 ms) both ways.
Lateness is worker receipt minus scheduled time. Every throughput is also
given as a ratio to the baseline pair rate measured in the same run. With
the embedded server, CPU and RSS include the server and the measuring
worker (one process); the fleet's and the restart's CPU add their
scheduler processes.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("burn") {
				return runBurn(cmd, burn)
			}
			if err := a.conn.Validate(); err != nil {
				return usageError{err}
			}
			cfg.Conn = a.conn
			if !cmd.Flags().Changed("log-level") {
				a.logLevel = "warn" // the schedulers' info lines would bury the progress
			}
			log, err := a.logger()
			if err != nil {
				return err
			}
			cfg.Logger = log
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			if isTerminal(a.stderr) {
				cfg.Progress = a.stderr
			} else {
				cfg.Progress = lineWriter{w: a.stderr, last: new(time.Time)}
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return usageError{fmt.Errorf("--cpuprofile %s: %w", profile, err)}
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile %s: %w", profile, err)
				}
				defer pprof.StopCPUProfile()
			}
			if allocProfile != "" {
				f, err := os.Create(allocProfile)
				if err != nil {
					return usageError{fmt.Errorf("--allocprofile %s: %w", allocProfile, err)}
				}
				defer f.Close()
				defer func() { _ = pprof.Lookup("allocs").WriteTo(f, 0) }() // what the whole run allocated, sampled
			}
			if self, err := os.Executable(); err == nil {
				cfg.Binary = self // the fleet runs `scheduler run` processes
			}
			// The in-process scheduler collects as `scheduler run` does
			// (and so do the server and the measuring worker beside it).
			cfg.GCPercent, cfg.GCSource = memlimit.SetGCPercent(cfg.GCPercent, os.Getenv)
			mem, err := memlimit.Apply(memoryLimit, os.Getenv, os.DirFS("/"))
			if err != nil {
				return usageError{fmt.Errorf("--memory-limit: %w", err)}
			}
			cfg.MemoryLimit = mem
			rep, err := bench.Run(cmd.Context(), cfg)
			if rep != nil {
				if werr := writeBench(a, rep, out); werr != nil && err == nil {
					err = werr
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&cfg.Only, "scenario", nil, "scenarios to run (default all): baseline,steady,herd,native,floor,scale,timers,fleet,restart (native: the NATS server's own @at and @every message schedules, the peer to beat, with the floor rows; floor: a plain publisher's fires, the least a client-side scheduler pays)")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "embedded nats-server store (default: a temporary directory, removed afterwards)")
	durationVar(fl, &cfg.Duration, "duration", 10*time.Second, "measured time of each steady and fleet run")
	fl.IntVar(&cfg.BaselinePairs, "baseline-pairs", 100_000, "CAS+publish pairs the baseline sends (its latency probe sends as many messages, at most 5,000)")
	fl.IntSliceVar(&cfg.Steady, "steady", []int{1_000, 10_000, 20_000, 50_000}, "schedule counts of the steady scenario (each fires every second; the largest finds the sustainable rate)")
	fl.IntVar(&cfg.Herd, "herd", 100_000, "schedules due in the same second")
	fl.IntVar(&cfg.Rounds, "rounds", 1, "run the scenarios after the baseline this many times, one after the other in each round, and compare jetsched with the server's own schedules round by round and by the median")
	fl.IntVar(&cfg.Scale, "scale", 1_000_000, "schedules the scale scenario indexes")
	fl.IntVar(&cfg.Timers, "timers", 200_000, "timers due within 10 s")
	fl.IntVar(&cfg.Fleet, "fleet", 10_000, "schedules of the fleet scenario (run with 1, 2 and 3 instances)")
	fl.IntVar(&cfg.Restart, "restart", 10_000, "schedules of the restart scenario (each every second; its scheduler stopped with SIGTERM, then SIGKILL, and started again)")
	fl.IntVar(&cfg.TimerWorkers, "timer-workers", timers.DefaultWorkers, "each scheduler's timer concurrency, as scheduler run --timer-workers")
	fl.IntVar(&cfg.Workers, "workers", fires.DefaultWorkers, "each scheduler's concurrency, as scheduler run --workers")
	fl.IntVar(&cfg.WindowSlots, "window-slots", fires.DefaultWindowSlots, "as scheduler run --window-slots (0: every slot claimed on its own record, the protocol before window claims)")
	fl.IntVar(&cfg.WindowBusy, "window-busy", fires.DefaultWorkers/2, "as scheduler run --window-busy (0: windows always)")
	durationVar(fl, &cfg.FireQuantum, "fire-quantum", fires.DefaultFireQuantum, "as scheduler run --fire-quantum (0: each slot dispatched at its time)")
	durationVar(fl, &cfg.StateInterval, "state-interval", defaultStateInterval, "as scheduler run --state-interval (0: each fire recorded)")
	fl.BoolVar(&cfg.EndedLists, "ended-lists", true, "as scheduler run --ended-lists (false: a state record for each one-shot)")
	durationVar(fl, &cfg.RecordLag, "record-lag", fires.DefaultRecordLag, "as scheduler run --record-lag (0: each one-shot's record with its window)")
	fl.StringVar(&memoryLimit, "memory-limit", memlimit.Auto, "as scheduler run --memory-limit (the whole bench process); a GOMEMLIMIT environment variable wins")
	fl.IntVar(&cfg.GCPercent, "gc-percent", memlimit.DefaultGCPercent, "as scheduler run --gc-percent (the whole bench process: scheduler, server and worker); a GOGC environment variable wins")
	fl.StringVar(&cfg.GCHeadroom, "gc-headroom", "", "as scheduler run --gc-headroom, for the 'scheduler run' processes (fleet, scale); default run's")
	fl.BoolVar(&cfg.Audit, "audit", false, "run each steady count again with auditing on (its own trail, a random key; digests every 2s): what auditing costs")
	fl.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole run (scheduler, server and worker) to this file")
	fl.StringVar(&allocProfile, "allocprofile", "", "write what the whole run allocated (scheduler, server and worker; pprof's allocs profile) to this file at its end")
	fl.StringVar(&cfg.MemProfile, "memprofile", "", "write the scale scenario's scheduler's heap profile to this file when it measures RSS")
	fl.StringVar(&cfg.LogDir, "log-dir", "", "keep the logs the bench discards in this existing directory: the embedded server's notices and warnings (nats-server.log) and each 'scheduler run' process's log at info level (<scenario>-<instance>.log)")
	fl.BoolVar(&cfg.ScaleInProcess, "scale-in-process", false, "run the scale scenario's scheduler in the bench process instead of a 'scheduler run' process (to profile it with --cpuprofile; RSS is then the whole process's)")
	fl.Float64Var(&cfg.Contend, "contend", 0, "also run every round beside a co-tenant process burning this many cores (fractions allowed, e.g. 0.5): the report gives each steady rate quiet and contended, how soon it is back on time, and the capacity both ways")
	fl.Float64Var(&burn, "burn", 0, "be the co-tenant of --contend: burn this many cores until stopped")
	_ = fl.MarkHidden("burn")
	fl.BoolVar(&a.jsonOut, "json", false, "print the report as JSON instead of the table")
	fl.StringVar(&out, "out", "", "also write the report as JSON to this file")
	return cmd
}

// runBurn is `bench --burn N`: the co-tenant process of --contend, burning
// N cores until its context ends (a signal) or it is killed.
func runBurn(cmd *cobra.Command, cores float64) error {
	if !(cores > 0 && cores <= bench.MaxContend) {
		return usageError{fmt.Errorf("--burn %v: must be a number of cores above 0 and at most %d", cores, bench.MaxContend)}
	}
	bench.Burn(cmd.Context(), cores)
	return nil
}

func writeBench(a *app, rep *bench.Report, out string) error {
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteTable(a.stdout); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	return nil
}

// lineWriter turns in-place progress updates ("\r\033[K...") into plain
// lines for logs and pipes, at most one a second.
type lineWriter struct {
	w    io.Writer
	last *time.Time
}

func (l lineWriter) Write(p []byte) (int, error) {
	s := strings.TrimPrefix(string(p), "\r\033[K")
	if s == "" || time.Since(*l.last) < time.Second {
		return len(p), nil
	}
	*l.last = time.Now()
	_, err := fmt.Fprintln(l.w, s)
	return len(p), err
}
