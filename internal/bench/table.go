package bench

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable prints the report as an aligned table: one row per result,
// throughput with its ratio to the baseline pair rate.
func (rep *Report) WriteTable(w io.Writer) error {
	where := "external NATS"
	if rep.Embedded {
		where = "embedded nats-server (same process)"
	}
	fmt.Fprintf(w, "jetsched bench  %s  %s, %d cores, %s  %s\n", rep.Started.Format("2006-01-02 15:04Z"),
		rep.Machine.CPU, rep.Machine.Cores, rep.Machine.GoVersion, where)
	fmt.Fprintf(w, "baseline: %.0f KV CAS + publish pairs/s (with the ledger put of a fire: %.0f triples/s)\n", rep.BaselinePairsPerSec, rep.BaselineTriplesPerSec)
	fmt.Fprintf(w, "claims: %s; collector: %s\n\n", rep.Windows, rep.GC)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SCENARIO\tWHAT\tINST\tPER SEC\tx BASE\tP50 ms\tP99 ms\tMAX ms\tCPU s/1k\tSECONDS\tDUP\tGAPS\tOTHER\t")
	for _, x := range rep.Results {
		other := x.Note
		if x.BackOnTime != "" {
			other = join(other, fmt.Sprintf("back on time (each second's p99 under %d ms) %s after the co-tenant stopped (each second's worst: %s)", onTimeMs, x.BackOnTime, x.BackOnTimeWorst))
		}
		if x.RSSMiB > 0 {
			other = fmt.Sprintf("first due fire %.2fs, all due fired %.2fs, RSS %.0f MiB, idle CPU %.2f cores; %s", x.FirstFireSec, x.AllDueSec, x.RSSMiB, x.IdleCPU, x.Note)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t\n", x.Scenario, x.Label,
			num(float64(x.Instances), 0), num(x.PerSec, 0), num(x.Ratio, 2), num(x.P50Ms, 2), num(x.P99Ms, 2),
			num(x.MaxMs, 2), num(x.CPUPer1k, 3), num(x.Seconds, 2), x.Duplicates, x.Gaps, other)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := rep.writeVersus(w); err != nil {
		return err
	}
	return rep.writeCapacity(w)
}

// writeVersus prints jetsched's rows beside the server's own schedules'
// (Report.Versus), round by round, then each peer's median over the
// rounds.
func (rep *Report) writeVersus(w io.Writer) error {
	if len(rep.Versus) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\njetsched against the NATS server's own schedules, same run (rate and CPU per 1,000 fires: jetsched's over the server's;\n"+
		"publish floor: a plain publisher's fires, the least any client-side scheduler pays):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ROUND\tPEER\tRATE\tCPU s/1k\tP99 ms\tSERVER P99 ms\t")
	row := func(round string, v Versus) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", round, v.Peer+floorText(v.Scenario)+coTenant(v.ContendCores), times(v.Rate), times(v.CPU), num(v.P99Ms, 2), num(v.PeerP99Ms, 2))
	}
	for _, v := range rep.Versus {
		row(num(float64(v.Round), 0), v)
	}
	for _, v := range Medians(rep.Versus) {
		row("median", v)
	}
	return tw.Flush()
}

// floorText is ", publish floor" for the floor's comparison, else "".
func floorText(scenario string) string {
	if scenario == "floor" {
		return ", publish floor"
	}
	return ""
}

// times formats a ratio as "1.07x", or "-" when it was not measured.
func times(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// num formats v, or "-" when it was not measured.
func num(v float64, prec int) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// coTenant is ", co-tenant N cores" for a contended row, else "".
func coTenant(cores float64) string {
	if cores == 0 {
		return ""
	}
	return ", co-tenant " + coresText(cores)
}

// coresText is "1 core", "0.5 cores", "2 cores".
func coresText(cores float64) string {
	unit := " cores"
	if cores == 1 {
		unit = " core"
	}
	return strconv.FormatFloat(cores, 'f', -1, 64) + unit
}
