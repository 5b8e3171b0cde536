package fires

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The spec decoder and the batches the loop takes its watches' updates in.
//
// Spec values are decoded on a goroutine of their own, in watch order, so
// that a cold start's million decodes do not all wait on the loop's
// goroutine. Both the decoded specs and the state records reach the loop
// in batches of up to loadBatch: a loop turn per record (a select over
// all of the loop's channels, a dispatch, a timer reset) was a third of
// the loop's time during a cold start of a million schedules. A batch is
// only what is ready: when updates trickle in, each is its own batch, so
// batching delays nothing.

// loadBatch is how many updates of one watch the loop takes in one turn at
// most.
const loadBatch = 128

// specBatchesAhead is how many batches of decoded specs the decoder may
// have ready before the loop takes them.
const specBatchesAhead = 2

// decodedSpec is an entry of the specs bucket with its value decoded (the
// zero Spec for a delete and for the end-of-initial-values marker, nil kv).
type decodedSpec struct {
	kv   jetstream.KeyValueEntry
	spec kvstore.Spec
	err  error
	// compiled and cerr are the spec compiled on the decoder's goroutine
	// (ahead true), when it needs no named calendar (which only the loop
	// knows): a cold start's compiles then do not all wait on the loop.
	compiled compile.Compiled
	cerr     error
	ahead    bool
}

func decodeSpec(kv jetstream.KeyValueEntry) decodedSpec {
	d := decodedSpec{kv: kv}
	if kv != nil && !isDelete(kv) {
		d.spec, d.err = kvstore.DecodeSpec(kv.Value())
	}
	return d
}

// specDecoder decodes the entries of a spec watch, in order, into batches
// for the loop. The loop hands each batch back once done with it (reuse),
// so that a cold start does not make a batch of garbage per batch.
type specDecoder struct {
	out  chan []decodedSpec
	free chan []decodedSpec
}

func newSpecDecoder() *specDecoder {
	return &specDecoder{
		out:  make(chan []decodedSpec, specBatchesAhead),
		free: make(chan []decodedSpec, specBatchesAhead+1),
	}
}

// run decodes the entries of in onto d.out until in is closed (d.out is
// closed then) or ctx ends; ahead compiles those it can.
func (d *specDecoder) run(ctx context.Context, in <-chan jetstream.KeyValueEntry, ahead func(*decodedSpec)) {
	defer close(d.out)
	for {
		var kv jetstream.KeyValueEntry
		ok := true
		select {
		case <-ctx.Done():
			return
		case kv, ok = <-in:
		}
		batch := d.batch()
		for ok {
			batch = append(batch, decodeSpec(kv))
			ahead(&batch[len(batch)-1])
			if len(batch) == cap(batch) {
				break
			}
			select {
			case kv, ok = <-in:
				continue
			default:
			}
			break
		}
		if len(batch) > 0 {
			select {
			case d.out <- batch:
			case <-ctx.Done():
				return
			}
		}
		if !ok {
			return
		}
	}
}

// batch is an empty batch, a handed back one if there is one.
func (d *specDecoder) batch() []decodedSpec {
	select {
	case b := <-d.free:
		return b
	default:
		return make([]decodedSpec, 0, loadBatch)
	}
}

// reuse hands a batch the loop is done with back to the decoder.
func (d *specDecoder) reuse(b []decodedSpec) {
	clear(b) // the specs and entries it held are not kept alive by it
	select {
	case d.free <- b[:0]:
	default:
	}
}

// takeMore calls take with each update c has ready, after first (already
// taken), until loadBatch have been taken in all, take returns false, or
// c has nothing ready. It reports whether c is still open.
func takeMore[T any](c <-chan T, take func(T) bool) (open bool) {
	for range loadBatch - 1 {
		select {
		case v, ok := <-c:
			if !ok {
				return false
			}
			if !take(v) {
				return true
			}
		default:
			return true
		}
	}
	return true
}
