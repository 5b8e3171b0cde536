package fires

import (
	"context"
	"sync"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/nats-io/nats.go/jetstream"
)

// loader is the loop's cold start (docs/protocol.md, "Cold start: due
// work first"): which watches have delivered their initial values, the
// specs fetched ahead of their watch for schedules due soon (fetchSpec),
// the specs left to compile on approach or behind the loop (approach.go),
// and the entries map sized for the load (sizefor.go). The loop owns it
// and calls it at a few points (see below); only the loop goroutine
// touches it but for the channels, which it shares, each with the
// goroutine named.
type loader struct {
	// l is the loop it runs on: it calls back into the index.
	l *loop
	// specsLoaded, statesLoaded and calsLoaded: the watch has delivered
	// its initial values.
	specsLoaded, statesLoaded, calsLoaded bool
	// fetches are schedules whose state record came during the load, due
	// soon, before their spec: a fetcher goroutine (fetchSpecs) reads the
	// spec ahead of the watch and hands it back on fetched (see
	// fetchSpec).
	fetches chan string
	fetched chan jetstream.KeyValueEntry
	// lazyIDs are the entries left to compile behind the loop once the
	// index is complete, handed over to the compiler goroutine
	// (compileLazySpecs) on lazyIn and back on lazyOut, in batches:
	// lazyNext is the one to hand over next.
	lazyIDs  []string
	lazyNext []lazySpec
	// loadLazy are the entries made lazy during the load (makeLazy), for
	// lazyIDs once the index is complete (ready).
	loadLazy []string
	lazyIn   chan []lazySpec
	lazyOut  chan []lazyCompiled
	// decoder decodes the spec watch's values for the loop on a goroutine
	// of its own (specdecoder.go).
	decoder *specDecoder
	// sized is how many entries the entries map was last sized for
	// (sizeFor); the map is made by a sizing goroutine and comes on
	// resized, one at a time (resizing).
	sized    int
	sizing   sync.WaitGroup
	resized  chan map[string]*entry
	resizing bool
}

func newLoader(l *loop) loader {
	return loader{
		l:       l,
		fetches: make(chan string, fetchQueue),
		fetched: make(chan jetstream.KeyValueEntry, fetchQueue),
		lazyIn:  make(chan []lazySpec, 1),
		lazyOut: make(chan []lazyCompiled, 1),
		resized: make(chan map[string]*entry, 1),
	}
}

// The loop calls the loader at these points only: start and stop (its
// goroutines), sizeFor (each initial value of a watch), specsIn,
// statesIn and calendarsIn (a watch's initial values are in), ready (the
// index is complete), makeLazy (a spec of the initial load, kept to
// compile on approach), approach and compileLazy (a lazy entry is
// scheduled, or needed now), fetchSpec (a state record came before its
// spec), and in its select lazyOffer, lazyTaken, onLazy (the compiler
// behind the loop) and takeSized. The loop reads loaded, statesLoaded and
// calsLoaded.

// loaded reports whether every watch has delivered its initial values.
func (ld *loader) loaded() bool { return ld.specsLoaded && ld.statesLoaded && ld.calsLoaded }

// specsIn: the specs' watch has delivered its initial values.
func (ld *loader) specsIn() {
	ld.specsLoaded = true
	ld.l.e.loading.specs.Store(true)
}

// statesIn: the state watch has delivered its initial values. The
// entries that waited for the last state record are scheduled: their
// spec is in and no state record is, so they are new.
func (ld *loader) statesIn() {
	ld.statesLoaded = true
	l := ld.l
	l.e.loading.states.Store(true)
	for _, en := range l.entries {
		if en.stateRev == 0 {
			l.schedule(en)
		}
	}
}

// calendarsIn: the calendars' watch has delivered its initial values.
// The schedules that waited for their calendar are compiled.
func (ld *loader) calendarsIn() {
	ld.calsLoaded = true
	l := ld.l
	l.e.loading.cals.Store(true)
	for _, en := range l.entries {
		switch {
		case en.lazy && en.calendar:
			ld.approach(en) // it waited for the calendars (lazyUntil)
		case en.specRev > 0 && !en.invalid && !en.lazy && en.compiled.Schedule == nil && !en.busy:
			l.compile(en)
		}
	}
}

// specFetchers is how many specs are fetched ahead of the watch at once.
// A fetch is a KV get, a round trip to a server that is busy delivering
// the load: one at a time, the hundred due schedules of the million-
// schedule bench fired over 2-4 s, one get after another.
const specFetchers = 8

// fetchQueue bounds the specs fetched ahead of the watch at a time; a due
// schedule that finds the queue full waits for the watch to bring its spec.
const fetchQueue = 1024

// fetchHorizon is how soon a schedule must be due for its spec to be
// fetched ahead of the watch.
const fetchHorizon = 10 * time.Second

// start runs the loader's goroutines on wg: the spec fetchers
// (fetchSpecs), the compiler of the specs left lazy (compileLazySpecs),
// and the decoder of the specs' watch (specdecoder.go), which compiles
// ahead the specs that come after the initial values; the initial values
// it leaves uncompiled: the loop compiles those due soon or unknown, the
// rest on approach (approach.go). They end with ctx, or at stop.
func (ld *loader) start(ctx context.Context, wg *sync.WaitGroup, specs *laterWatch) {
	e := ld.l.e
	for range specFetchers {
		wg.Go(func() { ld.fetchSpecs(ctx, e.store) })
	}
	wg.Go(func() { e.compileLazySpecs(ctx, ld.lazyIn, ld.lazyOut, e.test.holdLazy) })
	ld.decoder = newSpecDecoder()
	wg.Go(func() {
		w := specs.Watcher(ctx)
		if w == nil {
			return // the run ends before the watch starts
		}
		initial := true
		updates := e.test.holdUpdates(ctx, holdSpecs, w.Updates(), wg.Go)
		ld.decoder.run(ctx, updates, func(d *decodedSpec) {
			if d.kv == nil {
				initial = false // the end of the initial values
			} else if !initial {
				e.compileAhead(d)
			}
		})
	})
}

// stop asks the fetchers and the compiler for nothing more and waits for
// a map being sized (the loop has stopped taking from the loader).
func (ld *loader) stop() {
	close(ld.fetches)
	close(ld.lazyIn)
	ld.sizing.Wait()
}

// fetchSpecs reads the specs asked for on fetches and hands them to the
// loop, until fetches is closed. A spec that cannot be read is left to
// the watch.
func (ld *loader) fetchSpecs(ctx context.Context, store *jsstore.Store) {
	for id := range ld.fetches {
		kv, err := store.SpecRecord(ctx, id)
		if err != nil {
			continue
		}
		select {
		case ld.fetched <- kv:
		case <-ctx.Done():
		}
	}
}

// fetchSpec asks for en's spec ahead of the watch when the specs are still
// loading, en's arrived state record makes it due within fetchHorizon, and
// its spec has not come: due work first does not wait for the spec's turn
// in the watch. The fetched revision goes through onSpec like a watched
// one, so whichever of the two is older is dropped there.
func (ld *loader) fetchSpec(en *entry) {
	l := ld.l
	if ld.specsLoaded || en.specRev > 0 || en.fetching || !en.hasRecord() {
		return
	}
	st := en.view(&l.scratch)
	soon := l.e.cfg.Clock.Now().Add(fetchHorizon)
	if len(st.Triggers) == 0 && (st.Ended || st.Next.IsZero() || st.Next.After(soon)) {
		return
	}
	select {
	case ld.fetches <- en.id:
		en.fetching = true
	default: // the queue is full: the watch brings it
	}
}
