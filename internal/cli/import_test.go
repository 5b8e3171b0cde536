package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// writeImport writes n JSON lines, item i with id s<i>, every, and an
// input padded to pad bytes, plus extra lines.
func writeImport(t *testing.T, n int, every string, pad int, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"s%05d","spec":{"workflow":"wf","every":%q,"input":{"n":%d,"pad":%q}}}`+"\n", i, every, i, strings.Repeat("x", pad))
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	file := filepath.Join(t.TempDir(), "specs.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestImportMany: a few thousand schedules go in batches, each at its
// revision; importing the file again writes nothing; refused items (a
// static schedule, an unknown calendar) make the import write nothing and
// exit 2 naming the item.
func TestImportMany(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	file := writeImport(t, 2500, "1m", 0)
	code, out, errOut := e.run("schedule", "import", file)
	if code != ExitOK || !strings.Contains(out, "2500 schedule(s) imported (2500 written, 0 unchanged), 0 failed") || !strings.Contains(errOut, "imported 2500/2500") {
		t.Fatalf("import: exit %d: %s %s", code, out, errOut)
	}
	if n := e.specCount(); n != 2500 {
		t.Fatalf("%d specs after the import", n)
	}
	before, err := e.store.GetSpec(ctx, "s01234")
	if err != nil || before.Spec.Every != "1m" {
		t.Fatalf("s01234: %+v %v", before, err)
	}
	code, out, errOut = e.run("schedule", "import", file)
	if code != ExitOK || !strings.Contains(out, "(0 written, 2500 unchanged)") {
		t.Fatalf("import again: exit %d: %s %s", code, out, errOut)
	}
	if after, _ := e.store.GetSpec(ctx, "s01234"); after.Revision != before.Revision {
		t.Fatalf("an unchanged import moved s01234 from revision %d to %d", before.Revision, after.Revision)
	}

	_, err = e.store.ApplyStatic(ctx, jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{{ID: "invoice", Spec: kvstore.Spec{Workflow: "inv", Every: "1h"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, line, want string
	}{
		{"static", `{"id":"invoice","spec":{"workflow":"inv","every":"2h"}}`, `item 1501 (id "invoice"): schedule "invoice" is static`},
		{"unknown calendar", `{"id":"cal","spec":{"workflow":"wf","cron":"0 9 * * *","calendar":"nope"}}`, `item 1501 (id "cal")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeImport(t, 1500, "5m", 0, tc.line)
			code, out, errOut := e.run("schedule", "import", file)
			if code != ExitInvalid || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing was written") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if s, _ := e.store.GetSpec(ctx, "s00000"); s.Spec.Every != "1m" {
				t.Fatalf("a refused import wrote s00000: %+v", s.Spec)
			}
		})
	}
}

// TestImportNearMaxPayload: on a server with a 64 KiB max payload, items
// of a few KiB go in batches that fit, and one near the max payload goes
// alone.
func TestImportNearMaxPayload(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, &server.Options{MaxPayload: 64 << 10})
	big := fmt.Sprintf(`{"id":"big","spec":{"workflow":"wf","every":"1m","input":{"pad":%q}}}`, strings.Repeat("y", 60<<10))
	file := writeImport(t, 120, "1m", 3<<10, big)
	code, out, errOut := e.run("schedule", "import", file)
	if code != ExitOK || !strings.Contains(out, "121 schedule(s) imported") {
		t.Fatalf("import: exit %d: %s %s", code, out, errOut)
	}
	if n := e.specCount(); n != 121 {
		t.Fatalf("%d specs after the import", n)
	}
}

// TestImportNoCheckRefusal: without the check pass, a batch with a
// refused item writes nothing, and the import exits 2 naming that item,
// not the ones left unwritten before it.
func TestImportNoCheckRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeImport(t, 10, "1m", 0, `{"id":"bad","spec":{"workflow":"wf","cron":"0 9 * * *","calendar":"nope"}}`, `{"id":"after","spec":{"workflow":"wf","every":"1m"}}`)
	code, out, errOut := e.run("schedule", "import", "--no-check", file)
	if code != ExitInvalid || !strings.Contains(errOut, `scheduler: item 11 (id "bad")`) || !strings.Contains(out, "0 schedule(s) imported (0 written, 0 unchanged), 12 failed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := e.specCount(); n != 0 {
		t.Fatalf("%d specs written by a refused batch", n)
	}
}
