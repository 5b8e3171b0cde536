package staticfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/jetsched/jetsched/internal/staticfile"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const billingYAML = `# the schedules of the billing service
schedules:
  - id: monthly-invoice
    workflow: invoice
    cron: "0 9 1 * *"
    tz: Europe/Paris
    misfire: fire_once
  - workflow: cleanup          # no id: the content hash
    every: 1h
    input: {olderThanDays: 30, tags: [a, b]}
  - id: launch
    workflow: notify
    at: 2030-12-31T23:59:00Z
  - id: close
    workflow: close
    business_day: -1
    time: "17:00"
    calendar: ecb
`

func TestParse(t *testing.T) {
	t.Parallel()
	set, err := staticfile.Parse("conf/billing.yaml", []byte(billingYAML))
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != "billing.yaml" || len(set.Schedules) != 4 {
		t.Fatalf("set %+v", set)
	}
	inv := set.Schedules[0]
	if inv.ID != "monthly-invoice" || inv.Spec.Cron != "0 9 1 * *" || inv.Spec.TZ != "Europe/Paris" || inv.Spec.Static != "billing.yaml" || inv.Spec.Misfire != "fire_once" {
		t.Fatalf("entry 1: %+v", inv)
	}
	clean := set.Schedules[1]
	if want := kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: []byte(`{"olderThanDays":30,"tags":["a","b"]}`)}); clean.ID != want {
		t.Fatalf("entry 2 id %q, want the content hash %q", clean.ID, want)
	}
	if at := set.Schedules[2].Spec.At; at == nil || !at.Equal(time.Date(2030, 12, 31, 23, 59, 0, 0, time.UTC)) {
		t.Fatalf("entry 3 at %v", at)
	}
	if c := set.Schedules[3].Spec; c.BusinessDay != -1 || c.Time != "17:00" || c.Calendar != "ecb" {
		t.Fatalf("entry 4: %+v", c)
	}
	// YAML 1.2: "no" is a string, not false, and 17:00 is not 1020.
	set, err = staticfile.Parse("n.yaml", []byte("schedules:\n  - {id: no, workflow: y, business_day: 1, time: 17:00, calendar: ecb}\n"))
	if err != nil || set.Schedules[0].ID != "no" || set.Schedules[0].Spec.Workflow != "y" || set.Schedules[0].Spec.Time != "17:00" {
		t.Fatalf("YAML 1.2 scalars: %+v, %v", set, err)
	}
	// The same in JSON, with a source label.
	js := `{"source":"billing","schedules":[{"id":"monthly-invoice","workflow":"invoice","cron":"0 9 1 * *","tz":"Europe/Paris"}]}`
	set, err = staticfile.Parse("billing.json", []byte(js))
	if err != nil || set.Source != "billing" || set.Schedules[0].Spec.Static != "billing" {
		t.Fatalf("JSON: %+v, %v", set, err)
	}
}

func TestParseRefusesBadFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, content string
		want                []string // in the message
	}{
		{"bad cron", "s.yaml", "schedules:\n  - id: a\n    workflow: w\n    cron: \"0 25 * * *\"\n", []string{"--schedules s.yaml", `entry 1 (id "a")`, "invalid cron"}},
		{"unknown field", "s.yaml", "schedules:\n  - id: a\n    workflow: w\n    cron: \"0 1 * * *\"\n  - workflow: w\n    evry: 1h\n", []string{"--schedules s.yaml", "entry 2", "evry"}},
		{"duplicate key", "s.yaml", "schedules:\n  - id: a\n    workflow: w\n    workflow: v\n    cron: \"0 1 * * *\"\n", []string{"--schedules s.yaml", "workflow"}},
		{"duplicate id", "s.yaml", "schedules:\n  - {id: a, workflow: w, cron: \"0 1 * * *\"}\n  - {id: a, workflow: w, cron: \"0 2 * * *\"}\n", []string{"entry 2", `"a"`, "entry 1 has it already"}},
		{"no recurrence", "s.yaml", "schedules:\n  - {id: a, workflow: w}\n", []string{"entry 1", "recurrence"}},
		{"two recurrences", "s.json", `{"schedules":[{"id":"a","workflow":"w","cron":"0 1 * * *","every":"1h"}]}`, []string{"--schedules s.json", "entry 1", "cron,every"}},
		{"bad id", "s.yaml", "schedules:\n  - {id: a.b, workflow: w, cron: \"0 1 * * *\"}\n", []string{"entry 1", "invalid id"}},
		{"a static of another source", "s.yaml", "schedules:\n  - {id: a, workflow: w, cron: \"0 1 * * *\", static: other}\n", []string{"entry 1", "invalid static"}},
		{"not a list", "s.yaml", "schedules: {id: a}\n", []string{"--schedules s.yaml", "schedules"}},
		{"unknown top-level field", "s.yaml", "schedule: []\n", []string{"--schedules s.yaml", "schedule"}},
		{"invalid YAML", "s.yaml", "schedules: [\n", []string{"--schedules s.yaml", "YAML"}},
		{"invalid JSON", "s.json", `{"schedules":[}`, []string{"--schedules s.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := staticfile.Parse(tc.path, []byte(tc.content))
			if !errors.Is(err, kvstore.ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			msg := usererr.Message(err)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "kvstore:") || strings.Contains(msg, "cronx:") {
				t.Errorf("message %q has a package prefix", msg)
			}
		})
	}
}

func TestLoadAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "schedules:\n  - {id: x, workflow: w, cron: \"0 1 * * *\"}\n")
	b := write("b.yaml", "schedules:\n  - {id: y, workflow: w, cron: \"0 1 * * *\"}\n")
	c := write("c.yaml", "schedules:\n  - {id: x, workflow: w, cron: \"0 2 * * *\"}\n")
	d := write("d.yaml", "source: a.yaml\nschedules: []\n")
	sets, err := staticfile.LoadAll([]string{a, b})
	if err != nil || len(sets) != 2 {
		t.Fatalf("%v, %v", sets, err)
	}
	if _, err := staticfile.LoadAll([]string{a, c}); err == nil || !strings.Contains(usererr.Message(err), `schedule "x" is declared in `+a) {
		t.Fatalf("an id in two files: %v", err)
	}
	if _, err := staticfile.LoadAll([]string{a, d}); err == nil || !strings.Contains(usererr.Message(err), `source "a.yaml"`) {
		t.Fatalf("a source in two files: %v", err)
	}
	if _, err := staticfile.LoadAll([]string{filepath.Join(dir, "missing.yaml")}); !errors.Is(err, kvstore.ErrInvalid) || !strings.Contains(usererr.Message(err), "missing.yaml") {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestLoadRefusesSpecialAndHugeFiles: a schedules file that is a FIFO or
// a device, or larger than MaxFileBytes, is refused naming the file and
// why, without blocking on the FIFO or reading the device without end.
func TestLoadRefusesSpecialAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "s.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(staticfile.MaxFileBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	_ = f.Close()
	for _, c := range []struct{ path, reason string }{
		{fifo, "FIFO"}, {"/dev/zero", "a device"}, {dir, "a directory"}, {huge, "larger than"},
	} {
		_, err := staticfile.Load(c.path)
		if !errors.Is(err, kvstore.ErrInvalid) {
			t.Fatalf("Load(%s): %v, want ErrInvalid", c.path, err)
		}
		if msg := usererr.Message(err); !strings.Contains(msg, c.path) || !strings.Contains(msg, c.reason) {
			t.Errorf("Load(%s): %q, want it to name the file and %q", c.path, msg, c.reason)
		}
	}
}
