package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/redact"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/semver"
)

// MinServerVersion is the oldest nats-server jetsched runs on: 2.11 brings
// per-key TTLs and limit markers, which shard leases use.
const MinServerVersion = "2.11.0"

var (
	// ErrNoJetStream is returned by Preflight when the server or account
	// has no JetStream.
	ErrNoJetStream = errors.New("kvstore: JetStream is not enabled")
	// ErrServerTooOld is returned by Preflight for servers older than
	// MinServerVersion.
	ErrServerTooOld = errors.New("kvstore: nats-server too old")
)

// Preflight checks that the connected NATS system can host jetsched and
// says plainly what is missing.
func Preflight(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) error {
	v := nc.ConnectedServerVersion()
	if !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("%w: %s at %s is version %q; jetsched needs %s or newer (per-key TTLs)",
			ErrServerTooOld, nc.ConnectedServerName(), redact.URL(nc.ConnectedUrl()), v, MinServerVersion)
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return fmt.Errorf("%w on %s: start nats-server with -js (or `jetstream {}` in its config) and give the account JetStream limits: %v",
				ErrNoJetStream, redact.URL(nc.ConnectedUrl()), err)
		}
		return fmt.Errorf("kvstore: JetStream account info from %s: %w", redact.URL(nc.ConnectedUrl()), err)
	}
	return nil
}

// versionAtLeast reports whether server version have is at least want
// ("2.15.3", "v2.12.0-RC.1"; a pre-release counts as its release).
func versionAtLeast(have, want string) bool {
	h := "v" + strings.TrimPrefix(have, "v")
	if !semver.IsValid(h) {
		return false
	}
	h = strings.TrimSuffix(strings.TrimSuffix(h, semver.Build(h)), semver.Prerelease(h))
	return semver.Compare(h, "v"+want) >= 0
}

// SetupConfig says how to create jetsched's buckets and streams.
type SetupConfig struct {
	// Layout names them. Zero value: the defaults.
	Layout kvstore.Layout
	// Replicas for every bucket and stream (3 on a cluster). Default 1.
	Replicas int
	// TickRetention is how long ledger entries live (the TTL of
	// sched_ticks). Default 24h.
	TickRetention time.Duration
	// FireRetention is how long fire and wakeup messages stay in their
	// streams. Default 7 days.
	FireRetention time.Duration
	// FireHistory bounds the fires kept per schedule in SCHED_FIRES (its
	// MaxMsgsPerSubject: the subjects are per schedule), besides
	// FireRetention. Default DefaultFireHistory; -1: no limit. A worker
	// down for longer than a schedule takes to fire this many times loses
	// the oldest of them.
	FireHistory int64
	// EventRetention is how long events stay in SCHED_EVENTS. Default 7 days.
	EventRetention time.Duration
	// Shards is the number of shards schedules are spread over, fixed when
	// the leases bucket is created (an existing bucket keeps its count).
	// Default 64.
	Shards int
	// DuplicateWindow is SCHED_FIRES' Nats-Msg-Id dedupe window. It must be
	// longer than a claim's expiry plus the publish retry budget (the
	// scheduler checks at start). Default 2m.
	DuplicateWindow time.Duration
}

func (c SetupConfig) withDefaults() SetupConfig {
	c.Layout = c.Layout.WithDefaults()
	c.Replicas = cmp.Or(c.Replicas, 1)
	c.TickRetention = cmp.Or(c.TickRetention, 24*time.Hour)
	c.FireRetention = cmp.Or(c.FireRetention, 7*24*time.Hour)
	c.EventRetention = cmp.Or(c.EventRetention, 7*24*time.Hour)
	c.FireHistory = cmp.Or(c.FireHistory, DefaultFireHistory)
	c.DuplicateWindow = cmp.Or(c.DuplicateWindow, DefaultDuplicateWindow)
	c.Shards = cmp.Or(c.Shards, DefaultShards)
	return c
}

func (c SetupConfig) validate() error {
	switch {
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf("%w: replicas %d: must be 1 to 5", kvstore.ErrInvalid, c.Replicas)
	case c.Shards < 1 || c.Shards > 4096:
		return fmt.Errorf("%w: shards %d: must be 1 to 4096", kvstore.ErrInvalid, c.Shards)
	case c.FireHistory < -1 || c.FireHistory == 0:
		return fmt.Errorf("%w: fire history %d: must be at least 1, or -1 for no limit", kvstore.ErrInvalid, c.FireHistory)
	case c.DuplicateWindow < time.Second:
		return fmt.Errorf("%w: duplicate window %s: must be at least 1s", kvstore.ErrInvalid, c.DuplicateWindow)
	case c.DuplicateWindow > c.FireRetention:
		return fmt.Errorf("%w: duplicate window %s longer than fire retention %s", kvstore.ErrInvalid, c.DuplicateWindow, c.FireRetention)
	}
	return nil
}

// DefaultFireHistory is how many fires of one schedule SCHED_FIRES keeps
// at most unless SetupConfig.FireHistory says otherwise: more than a day of
// a schedule firing every second; slower schedules are bounded by the
// stream's age limit first.
const DefaultFireHistory = 100_000

// DefaultShards is the shard count of a new leases bucket.
const DefaultShards = 64

// DefaultDuplicateWindow is SCHED_FIRES' (and SCHED_WAKEUPS') Nats-Msg-Id
// window unless set (scheduler run --duplicate-window).
const DefaultDuplicateWindow = 2 * time.Minute

// ShardsMetadata is the leases bucket's metadata key holding the shard
// count.
const ShardsMetadata = "jetsched_shards"

// shardsOf keeps an existing leases bucket's shard count: it is fixed at
// creation, because every instance must map ids to the same shards.
func shardsOf(ctx context.Context, js jetstream.JetStream, bucket string, want int) int {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return want
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return want
	}
	if n, err := strconv.Atoi(st.Config().Metadata[ShardsMetadata]); err == nil && n > 0 {
		return n
	}
	return want
}

// Setup creates jetsched's buckets and streams, or updates them to cfg.
// It is idempotent: every scheduler runs it at start.
func Setup(ctx context.Context, js jetstream.JetStream, cfg SetupConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	l := cfg.Layout
	buckets := []jetstream.KeyValueConfig{
		{Bucket: l.SpecsBucket, Description: "jetsched schedule specs (user-owned)", History: 16},
		{Bucket: l.StateBucket, Description: "jetsched schedule state (scheduler-owned, CAS)", History: 1},
		{Bucket: l.TicksBucket, Description: "jetsched slot ledger", History: 1, TTL: cfg.TickRetention},
		{Bucket: l.WakeupsBucket, Description: "jetsched pending timers", History: 1},
		{Bucket: l.CalendarsBucket, Description: "jetsched business calendars", History: 16},
		{Bucket: l.LeasesBucket, Description: "jetsched shard leases", History: 1, LimitMarkerTTL: time.Second,
			Metadata: map[string]string{ShardsMetadata: strconv.Itoa(shardsOf(ctx, js, l.LeasesBucket, cfg.Shards))}},
	}
	for _, b := range buckets {
		b.Replicas = cfg.Replicas
		b.Storage = jetstream.FileStorage
		if _, err := js.CreateOrUpdateKeyValue(ctx, b); err != nil {
			return fmt.Errorf("kvstore: create or update bucket %s: %w", b.Bucket, err)
		}
	}
	streams := []jetstream.StreamConfig{
		{
			Name: l.FiresStream, Description: "jetsched fires: one message per slot",
			Subjects: []string{l.FireSubjects()}, MaxAge: cfg.FireRetention, Duplicates: cfg.DuplicateWindow,
			MaxMsgsPerSubject: cfg.FireHistory,
		},
		{
			Name: l.WakeupsStream, Description: "jetsched wakeups: one message per due timer",
			Subjects: []string{l.WakeupSubjects()}, MaxAge: cfg.FireRetention, Duplicates: cfg.DuplicateWindow,
		},
		{
			Name: l.EventsStream, Description: "jetsched observer events",
			Subjects: []string{l.EventSubjects()}, MaxAge: cfg.EventRetention,
		},
	}
	for _, s := range streams {
		s.Replicas = cfg.Replicas
		s.Storage = jetstream.FileStorage
		s.Retention = jetstream.LimitsPolicy
		s.Discard = jetstream.DiscardOld
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return fmt.Errorf("kvstore: create or update stream %s: %w", s.Name, err)
		}
	}
	return nil
}
