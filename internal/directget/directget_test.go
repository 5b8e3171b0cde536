package directget_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/directget"
	"github.com/jetsched/jetsched/internal/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The last message of each matching subject, every one once; nothing for
// filters that match nothing; ErrTooMany past what one answer holds;
// ErrNoDirect from a stream without direct gets.
func TestLastPerSubject(t *testing.T) {
	t.Parallel()
	_, js := natstest.Start(t).Connect(t)
	ctx := context.Background()
	for _, direct := range []bool{true, false} {
		name := map[bool]string{true: "D", false: "N"}[direct]
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, AllowDirect: direct}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1030 {
		for k := range 2 {
			if _, err := js.Publish(ctx, fmt.Sprintf("D.s%04d", i), fmt.Appendf(nil, "%d", k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 100 {
		if _, err := js.Publish(ctx, fmt.Sprintf("D.w.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func(stream string, subjects ...string) (map[string]string, error) {
		got := map[string]string{}
		err := directget.LastPerSubject(ctx, js, stream, subjects, func(m *nats.Msg) {
			subj := m.Header.Get(jetstream.SubjectHeader)
			if _, dup := got[subj]; dup {
				t.Errorf("%s twice", subj)
			}
			got[subj] = string(m.Data)
		})
		return got, err
	}
	got, err := read("D", "D.s0001", "D.s0002", "D.nothing")
	if err != nil || len(got) != 2 || got["D.s0001"] != "1" || got["D.s0002"] != "1" {
		t.Errorf("two subjects and one without a message: %v, %v; want the last of each of the two", got, err)
	}
	if got, err := read("D", "D.w.*"); err != nil || len(got) != 100 {
		t.Errorf("a wildcard over 100 subjects: %d messages, %v", len(got), err)
	}
	if got, err := read("D", "D.nothing.>"); err != nil || len(got) != 0 {
		t.Errorf("no subject matching: %v, %v; want nothing, no error", got, err)
	}
	if _, err := read("D", "D.*"); !errors.Is(err, directget.ErrTooMany) {
		t.Errorf("1,030 subjects: %v; want ErrTooMany", err)
	}
	if _, err := read("N", "N.>"); !errors.Is(err, directget.ErrNoDirect) {
		t.Errorf("a stream without direct gets: %v; want ErrNoDirect", err)
	}
	if got, err := read("D"); err != nil || len(got) != 0 {
		t.Errorf("no subjects: %v, %v", got, err)
	}
}
