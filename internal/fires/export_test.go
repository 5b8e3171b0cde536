package fires

import "time"

// HoldSpecs returns cfg with its initial load of specs held back after n
// of them until release is closed (see loadHold).
func HoldSpecs(cfg Config, n int, release <-chan struct{}) Config {
	cfg.hold = &loadHold{watch: holdSpecs, after: n, release: release}
	return cfg
}

// HoldSpecsWatch returns cfg with the specs' watch held back from
// starting until release is closed.
func HoldSpecsWatch(cfg Config, release <-chan struct{}) Config {
	cfg.holdSpecsWatch = release
	return cfg
}

// HoldStates is HoldSpecs for the state records.
func HoldStates(cfg Config, n int, release <-chan struct{}) Config {
	cfg.hold = &loadHold{watch: holdStates, after: n, release: release}
	return cfg
}

// RecordsOnLag makes the engine write the deferred state records of
// one-shots only once cfg.RecordLag has passed, not when it is idle.
func RecordsOnLag(cfg Config) Config {
	cfg.recordsOnLag = true
	return cfg
}

// SweepEvery makes the engine sweep its shards' ended lists every d.
func SweepEvery(cfg Config, d time.Duration) Config {
	cfg.sweepEvery = d
	return cfg
}

// CompileOnApproach returns cfg with the specs left uncompiled at the
// initial load compiled lead before their next slot, and the compiles of
// those left after it held back until release is closed (approach.go).
func CompileOnApproach(cfg Config, lead time.Duration, release <-chan struct{}) Config {
	cfg.compileLead, cfg.holdLazy = lead, release
	return cfg
}
