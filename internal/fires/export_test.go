package fires

// HoldSpecs returns cfg with its initial load of specs held back after n
// of them until release is closed (see loadHold).
func HoldSpecs(cfg Config, n int, release <-chan struct{}) Config {
	cfg.hold = &loadHold{watch: holdSpecs, after: n, release: release}
	return cfg
}

// HoldStates is HoldSpecs for the state records.
func HoldStates(cfg Config, n int, release <-chan struct{}) Config {
	cfg.hold = &loadHold{watch: holdStates, after: n, release: release}
	return cfg
}
