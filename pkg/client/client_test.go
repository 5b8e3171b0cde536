package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestDefaultKeyIsCanonical(t *testing.T) {
	t.Parallel()
	key := func(wf string, input string, r client.Recurrence, opts ...client.Option) string {
		t.Helper()
		k, err := client.DefaultKey(wf, json.RawMessage(input), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := key("sync", `{"b":1,"a":[1,2]}`, client.Every(time.Hour))
	if b := key("sync", `{"a":[1,2],"b":1}`, client.Every(time.Hour)); a != b {
		t.Fatalf("key order changed the key: %s vs %s", a, b)
	}
	// The CLI's schedule add without --id derives the same key from the
	// same schedule: kvstore.DefaultKey of the spec.
	if cli := kvstore.DefaultKey(kvstore.Spec{Workflow: "sync", Every: "60m", Input: json.RawMessage(`{"a":[1,2],"b":1}`)}); cli != a {
		t.Fatalf("the CLI's key %s differs from the client's %s", cli, a)
	}
	if k := key("sync", `{"a":[1,2],"b":1}`, client.Every(time.Hour), client.WithKey("mine")); k != a {
		t.Fatalf("WithKey changed DefaultKey: %s", k)
	}
	for _, other := range []string{
		key("sync", `{"a":[1,2],"b":2}`, client.Every(time.Hour)),
		key("sync", `{"a":[1,2],"b":1}`, client.Every(2*time.Hour)),
		key("other", `{"a":[1,2],"b":1}`, client.Every(time.Hour)),
		key("sync", `{"a":[1,2],"b":1}`, client.Every(time.Hour), client.InZone("Europe/Paris")),
		key("sync", `{"a":[1,2],"b":1}`, client.Every(time.Hour), client.WithMisfire("fire_all", 0)),
	} {
		if other == a {
			t.Fatalf("different schedules share the key %s", a)
		}
	}
}

// TestReRegisterKeepsCadence: registering again at every start keeps the
// schedule's next slot; a new recurrence re-plans.
func TestReRegisterKeepsCadence(t *testing.T) {
	t.Parallel()
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, err := c.Schedule(ctx, "daily", nil, client.Cron("0 3 * * *"), client.WithKey("daily"))
	if err != nil {
		t.Fatal(err)
	}
	first := waitPlanned(c, key)
	for range 3 { // three restarts
		if _, err := c.Schedule(ctx, "daily", nil, client.Cron("0 3 * * *"), client.WithKey("daily"), client.WithDescription("v2")); err != nil {
			t.Fatal(err)
		}
	}
	// The scheduler reads registrations in the order they were written:
	// once it has planned one written after the re-registrations, it has
	// seen them.
	waitPlanned(c, mustSchedule(t, c, "marker", client.Every(time.Hour)))
	info, err := c.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Next.Equal(first.Next) || info.Description != "v2" {
		t.Fatalf("re-registering moved the cadence: %v -> %v (description %q)", first.Next, info.Next, info.Description)
	}
	mustSchedule(t, c, "daily", client.Cron("0 4 * * *"), client.WithKey("daily"))
	err = testwait.Until(10*time.Second, "the new recurrence re-planned at 04:00", func() error {
		info, err = c.Get(ctx, key)
		if err == nil && info.Next.UTC().Hour() != 4 {
			err = fmt.Errorf("next %v", info.Next)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mustSchedule registers a schedule of workflow or fails the test.
func mustSchedule(t *testing.T, c *client.Client, workflow string, r client.Recurrence, opts ...client.Option) string {
	t.Helper()
	key, err := c.Schedule(context.Background(), workflow, nil, r, opts...)
	if err != nil {
		t.Fatalf("schedule %s: %v", workflow, err)
	}
	return key
}

// TestScheduleWithDomDow: the day rule is stored with the spec, whose
// schedule then uses it; a bad rule is refused naming dom_dow.
func TestScheduleWithDomDow(t *testing.T) {
	t.Parallel()
	c, js, stop := example()
	defer stop()
	ctx := context.Background()
	key, err := c.Schedule(ctx, "friday13", nil, client.Cron("0 0 13 * FRI"), client.WithDomDow(cronx.DomDowAnd))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Get(ctx, key)
	if err != nil || info.DomDow != "and" {
		t.Fatalf("Get(%s) = %+v, %v; want dom_dow and", key, info, err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := store.GetSpec(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := compile.Compile(e.Spec, key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 2, 13, 0, 0, 0, 0, time.UTC) // the first Friday the 13th of 2026
	if next := compiled.Schedule.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); !next.Equal(want) {
		t.Fatalf("stored spec fires at %v after 2026-01-01, want %v", next, want)
	}

	_, err = c.Schedule(ctx, "friday13", nil, client.Cron("0 0 13 * FRI"), client.WithDomDow(cronx.DomDow(7)))
	var fe *kvstore.FieldError
	if !errors.As(err, &fe) || fe.Field != "dom_dow" {
		t.Fatalf("WithDomDow(7): err %v, want a FieldError on dom_dow", err)
	}
}

// TestClientOptionsValidate: bad options are refused by New, naming the
// option.
func TestClientOptionsValidate(t *testing.T) {
	t.Parallel()
	_, js, stop := example()
	defer stop()
	ctx := context.Background()
	other, err := jetstream.NewWithDomain(js.Conn(), "hub")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		js   jetstream.JetStream
		opts []client.ClientOption
		want string
	}{
		{"nil JetStream", nil, nil, "the JetStream is nil"},
		{"empty domain", js, []client.ClientOption{client.WithDomain("")}, "WithDomain: the domain must not be empty"},
		{"another domain", other, []client.ClientOption{client.WithDomain("edge")}, `WithDomain("edge"): the JetStream passed in is bound to domain "hub"`},
		{"two layouts", js, []client.ClientOption{client.WithNamePrefix("a"), client.WithLayout(kvstore.Layout{})}, "WithNamePrefix and WithLayout both choose the layout"},
		{"bad prefix", js, []client.ClientOption{client.WithNamePrefix("")}, "name-prefix"},
	} {
		if _, err := client.New(ctx, tc.js, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
