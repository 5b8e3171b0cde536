package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/pipelined"
)

// baseline measures the limit of the fire path on this NATS system: a KV
// compare-and-swap (a put with Nats-Expected-Last-Subject-Sequence) paired
// with a deduplicated stream publish, both pipelined (the reference of
// every ratio); the same with a third write, a ledger put, as a fire
// makes; then the latency from publish to a consumer.
func (r *runner) baseline(ctx context.Context) ([]Result, error) {
	s, err := r.newScenario(ctx, "baseline")
	if err != nil {
		return nil, err
	}
	defer s.close()
	pairs, err := r.pipelined(ctx, s, false)
	if err != nil {
		return nil, err
	}
	triples, err := r.pipelined(ctx, s, true)
	if err != nil {
		return nil, err
	}
	lat, err := r.publishLatency(ctx, s)
	r.progressDone()
	if err != nil {
		return nil, err
	}
	return []Result{pairs, triples, lat}, nil
}

// pipelined sends BaselinePairs CAS+publish pairs (with ledger: plus a KV
// put on a new key each, as a fire's ledger tick) over 1,000 keys, each
// CAS waiting only for the previous one on its key.
func (r *runner) pipelined(ctx context.Context, s *scenario, ledger bool) (Result, error) {
	const keys = 1000
	what, label := "pairs", "KV CAS + publish pairs"
	if ledger {
		what, label = "triples", "CAS + publish + ledger put"
	}
	kvSubj := jsname.KVPrefix(r.js, s.layout.StateBucket)
	tickSubj := jsname.KVPrefix(r.js, s.layout.TicksBucket)
	pending := make([]jetstream.PubAckFuture, keys)
	revs := make([]uint64, keys)
	for k := range keys {
		ack, err := r.js.Publish(ctx, kvSubj+"k"+strconv.Itoa(k), []byte("0"))
		if err != nil {
			return Result{}, fmt.Errorf("seed key %d: %w", k, err)
		}
		revs[k] = ack.Sequence
	}
	n := r.cfg.BaselinePairs
	cpu0, t0 := cpuSeconds(), time.Now()
	for i := range n {
		k := i % keys
		if f := pending[k]; f != nil {
			select {
			case ack := <-f.Ok():
				revs[k] = ack.Sequence
			case err := <-f.Err():
				return Result{}, fmt.Errorf("CAS on key %d: %w", k, err)
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
		}
		m := nats.NewMsg(kvSubj + "k" + strconv.Itoa(k))
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(revs[k], 10))
		m.Data = []byte(strconv.Itoa(i))
		var err error
		if pending[k], err = pipelined.Publish(ctx, r.js, m); err != nil {
			return Result{}, fmt.Errorf("CAS publish: %w", err)
		}
		fm := nats.NewMsg(s.layout.FireSubject("baseline", "k"+strconv.Itoa(k))) // a fire's subject: workflow and schedule
		fm.Header.Set(jetstream.MsgIDHeader, what+"-"+strconv.Itoa(i))
		fm.Data = []byte("{}")
		if err := r.publishAsync(ctx, fm); err != nil {
			return Result{}, fmt.Errorf("fire publish: %w", err)
		}
		if ledger {
			tm := &nats.Msg{Subject: tickSubj + "k" + strconv.Itoa(k) + "." + strconv.Itoa(i), Data: []byte(`{"status":"dispatched"}`)}
			if err := r.publishAsync(ctx, tm); err != nil {
				return Result{}, fmt.Errorf("ledger put: %w", err)
			}
		}
		if i%5000 == 0 {
			r.progress("baseline: %d/%d %s", i, n, label)
		}
	}
	if err := r.flush(ctx); err != nil {
		return Result{}, err
	}
	el := time.Since(t0)
	return Result{Scenario: "baseline", Label: label, Count: n,
		PerSec: float64(n) / el.Seconds(), Seconds: el.Seconds(), CPUPer1k: (cpuSeconds() - cpu0) / float64(n) * 1000}, nil
}

// publishLatency publishes 5,000 messages (BaselinePairs when fewer: a
// small run's baseline is small throughout) paced at about 1,000/s and
// measures publish-to-consumer latency.
func (r *runner) publishLatency(ctx context.Context, s *scenario) (Result, error) {
	const rate = 1000
	n := min(5000, r.cfg.BaselinePairs)
	subj := s.layout.FireSubject("latency", "probe")
	cons, err := r.js.OrderedConsumer(ctx, s.layout.FiresStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subj}, DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return Result{}, fmt.Errorf("latency consumer: %w", err)
	}
	got := make(chan time.Duration, n)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		sent, err := time.Parse(time.RFC3339Nano, m.Headers().Get("Bench-Sent"))
		if err == nil {
			got <- time.Since(sent)
		}
	})
	if err != nil {
		return Result{}, fmt.Errorf("latency consume: %w", err)
	}
	defer cc.Stop()
	tk := time.NewTicker(time.Second / rate)
	defer tk.Stop()
	for i := range n {
		select {
		case <-tk.C:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
		m := nats.NewMsg(subj)
		m.Header.Set("Bench-Sent", time.Now().Format(time.RFC3339Nano))
		if err := r.publishAsync(ctx, m); err != nil {
			return Result{}, fmt.Errorf("latency publish: %w", err)
		}
		if i%500 == 0 {
			r.progress("baseline: publish-to-consumer latency %d/%d", i, n)
		}
	}
	lat := make([]time.Duration, 0, n)
	deadline := time.After(30 * time.Second)
	for len(lat) < n {
		select {
		case d := <-got:
			lat = append(lat, d)
		case <-deadline:
			return Result{}, fmt.Errorf("latency: %d of %d messages received", len(lat), n)
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	res := Result{Scenario: "baseline", Label: "publish -> consumer latency", Count: n}
	res.P50Ms, res.P99Ms, res.MaxMs = percentiles(lat)
	return res, nil
}
