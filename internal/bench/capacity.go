package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// onTimeMs is the lateness under which a steady rate holds (capacity) and
// a contended row is back on time (Result.BackOnTime): 50 ms at p99.
const onTimeMs = 50

// Capacity is the largest steady rate one system held in a run, quiet or
// beside the co-tenant.
type Capacity struct {
	// System is "jetsched" (the steady scenario) or "nats-server @every"
	// (the native scenario's @every rows, measured up to 10,000).
	System string `json:"system"`
	// ContendCores is the co-tenant's cores (0: quiet).
	ContendCores float64 `json:"contend_cores,omitempty"`
	// PerSec is the largest steady count (schedules each firing every
	// second: fires per second) whose median p99 lateness over the rounds
	// was under 50 ms with no slot lost in any round; 0 when none held.
	PerSec int `json:"per_sec"`
	// AtLeast is set when the largest count measured held: the capacity
	// is that or more.
	AtLeast bool `json:"at_least,omitempty"`
	// Measured lists each count measured with its median p99 in ms.
	Measured []CapacityStep `json:"measured"`
}

// CapacityStep is one steady count measured for a Capacity.
type CapacityStep struct {
	Count int     `json:"count"`
	P99Ms float64 `json:"p99_ms"`
	Gaps  int     `json:"gaps"`
	Held  bool    `json:"held"`
}

// capacity finds, from the steady rows measured (jetsched's steady rows
// with a peer, and the server's @every rows), each system's capacity
// quiet and with the co-tenant, in the order the systems first come.
func capacity(rs []Result) []Capacity {
	type key struct {
		system string
		cores  float64
	}
	type step struct {
		p99  []float64
		gaps int
	}
	var keys []key
	steps := map[key]map[int]*step{}
	for _, x := range rs {
		system := ""
		switch {
		case !strings.HasPrefix(x.Peer, "steady "):
			continue
		case x.Scenario == "steady":
			system = "jetsched"
		case x.Scenario == "native":
			system = "nats-server @every"
		default:
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(x.Peer, "steady "))
		if err != nil {
			continue
		}
		k := key{system, x.ContendCores}
		if steps[k] == nil {
			keys = append(keys, k)
			steps[k] = map[int]*step{}
		}
		s := steps[k][n]
		if s == nil {
			s = &step{}
			steps[k][n] = s
		}
		s.p99 = append(s.p99, x.P99Ms)
		s.gaps += x.Gaps
	}
	var out []Capacity
	for _, k := range keys {
		c := Capacity{System: k.system, ContendCores: k.cores}
		counts := make([]int, 0, len(steps[k]))
		for n := range steps[k] {
			counts = append(counts, n)
		}
		slices.Sort(counts)
		for _, n := range counts {
			s := steps[k][n]
			p99 := median(s.p99)
			held := p99 < onTimeMs && s.gaps == 0
			c.Measured = append(c.Measured, CapacityStep{Count: n, P99Ms: p99, Gaps: s.gaps, Held: held})
			if held {
				c.PerSec = n
			}
		}
		c.AtLeast = c.Measured[len(c.Measured)-1].Held
		out = append(out, c)
	}
	return out
}

// writeCapacity prints the report's capacities and its co-tenant.
func (rep *Report) writeCapacity(w io.Writer) error {
	if c := rep.Contention; c != nil {
		fmt.Fprintf(w, "\nco-tenant: %s (%s), ran %.0f s", coresText(c.Cores), c.Mode, c.ActiveSec)
		if c.CPUSec > 0 {
			fmt.Fprintf(w, ", used %.0f CPU s (not in the CPU figures)", c.CPUSec)
		} else if c.Mode == "in-process" {
			fmt.Fprint(w, " (its CPU is in the CPU figures)")
		}
		fmt.Fprintln(w)
	}
	if len(rep.Capacity) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ncapacity: the largest steady rate held at p99 under %d ms (median over the rounds, no slot lost):\n", onTimeMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SYSTEM\tCO-TENANT\tCAPACITY/s\tMEASURED (count: p99 ms)\t")
	for _, c := range rep.Capacity {
		held := "none held"
		if c.PerSec > 0 {
			held = strconv.Itoa(c.PerSec)
		}
		if c.AtLeast {
			held = ">= " + held
		}
		steps := make([]string, len(c.Measured))
		for i, s := range c.Measured {
			steps[i] = fmt.Sprintf("%d: %s", s.Count, strconv.FormatFloat(s.P99Ms, 'f', 1, 64))
			if s.Gaps > 0 {
				steps[i] += fmt.Sprintf(" (%d lost)", s.Gaps)
			}
		}
		cores := "none"
		if c.ContendCores > 0 {
			cores = coresText(c.ContendCores)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", c.System, cores, held, strings.Join(steps, ", "))
	}
	return tw.Flush()
}
