package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
)

// TestPartition runs every nemesis, one after the other, against a 3-node
// cluster in network namespaces with one scheduler per node, and checks
// after each that every slot due in its window fired exactly once.
//
//	sudo go test -count=1 -v -run TestPartition ./integration/partition/                          # small (CI)
//	sudo JETSCHED_PARTITION=full go test -count=1 -v -timeout 30m -run TestPartition ./integration/partition/
//
// JETSCHED_PARTITION_ONLY=<nemesis> runs that one alone (see guardRuns).
func TestPartition(t *testing.T) {
	h, dir := startRun(t)
	only := os.Getenv("JETSCHED_PARTITION_ONLY")
	for _, nem := range nemeses() {
		if only != "" && nem.name != only {
			continue
		}
		for i := range max(nem.repeat, 1) {
			name := nem.name
			if nem.repeat > 1 {
				name = fmt.Sprintf("%s-%02d", nem.name, i+1)
			}
			run := nem
			run.name = name
			ok := true
			t.Run(name, func(t *testing.T) { ok = h.runNemesis(t, run) })
			if !ok {
				t.Fatalf("%s left the cluster unusable: the remaining nemeses are not run", name)
			}
		}
	}

	if len(h.windows) == 0 {
		return
	}
	// The whole run, and duplicates anywhere in the stream.
	all := window{name: "all", start: h.windows[0].start, end: h.windows[len(h.windows)-1].end}
	all.heal = all.end
	f := account(h.scheds, h.reader.fires, all)
	faulttest.Summarize(t, f.line("all"))
	h.assert(t, "all", f, nil, true) // each window checked its own early fires
	dups := 0
	for k, recs := range h.reader.fires {
		if len(recs) > 1 {
			dups += len(recs) - 1
			t.Errorf("slot %s.%d: %d fire messages", k.id, k.ms, len(recs))
		}
	}
	t.Logf("whole stream: %d fire messages, %d slots, %d duplicates", h.reader.msgs, len(h.reader.fires), dups)
	if os.Getenv("JETSCHED_PARTITION_LOGS") != "" {
		if err := h.writeFires(filepath.Join(dir, "fires.csv")); err != nil {
			t.Error(err)
		}
	}
}

// startRun starts what every partition test runs on: a 3-node cluster in
// network namespaces with a scheduler per node, and the recurring
// schedules, fired once each (warm-up). It skips (fails under CI) where
// network namespaces cannot be made. dir holds configs, stores and logs.
func startRun(t *testing.T) (h *harness, dir string) {
	if why := netnsSupport(); why != "" {
		if os.Getenv("CI") != "" { // CI runs as root: network namespaces must work there
			t.Fatal(why)
		}
		t.Skip(why)
	}
	sz := sizeFromEnv(t)
	sweepNamespaces(t)
	bins := buildBinaries(t)
	nw := newNetwork(t, 3)
	tune := tuning{sync: os.Getenv("JETSCHED_PARTITION_SYNC"), routePing: os.Getenv("JETSCHED_PARTITION_ROUTE_PING")}
	leaseTTL := defaultLeaseTTL
	if v := os.Getenv("JETSCHED_PARTITION_LEASE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			t.Fatalf("JETSCHED_PARTITION_LEASE_TTL=%q: want a duration of 1s or more", v)
		}
		leaseTTL = d
	}
	dir = runDir(t, nw.id)
	c := startCluster(t, nw, bins, dir, tune, leaseTTL)
	c.startSchedulers()
	h = newHarness(t, c, sz)
	t.Logf("size %s: %d schedules every 1s, %d cron, %d one-shots per nemesis; faults of %s, %s of recovery; %s; lease TTL %s",
		sz.name, sz.every, sz.crons, sz.shots, sz.fault, sz.recovery, tune, leaseTTL)

	rec := recurring(sz.every, sz.crons)
	registered := time.Now()
	h.register(rec)
	// Warm-up: every recurring schedule has fired (a positive signal).
	if miss := h.reader.waitFired(rec, registered.Add(3*time.Second), registered.Add(9*time.Second), 60*time.Second); len(miss) > 0 {
		t.Fatalf("warm-up: %d slots not fired, e.g. %v", len(miss), first(miss, 5))
	}
	return h, dir
}

// runDir is where configs, stores and logs go: a temporary directory, or
// a new directory under $JETSCHED_PARTITION_LOGS, kept for analysis (with
// fires.csv, every fire read, written at the end).
func runDir(t *testing.T, id string) string {
	base := os.Getenv("JETSCHED_PARTITION_LOGS")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("keeping configs, stores and logs in %s", dir)
	return dir
}
