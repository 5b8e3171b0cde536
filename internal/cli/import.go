package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// importItem is one schedule in an import file.
type importItem struct {
	ID   string          `json:"id"`
	Spec json.RawMessage `json:"spec"`
}

func (a *app) scheduleImport() *cobra.Command {
	var keepGoing, noCheck bool
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: `Create or update many schedules from a file: a JSON array or JSON lines of {"id": ..., "spec": {...}}`,
		Long: `Create or update many schedules from a file: a JSON array, or one JSON
object per line, each {"id": ID, "spec": SPEC} with SPEC as in docs/records.md
(without an id, the spec's content hash, as schedule add gives it).
Every item is validated first, here and then by the admin API
(schedule.import with check: calendars exist, no static schedule, no
one-shot in the past): an invalid file writes nothing and exits 2 naming
the item. The items then go in batches (bounded by the server's max
payload), several at a time; each schedule written gets its audit entry,
and one whose stored spec is the same is not written. A progress line
(count, rate, ETA) shows on standard error.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readInputMax(args[0], cmd.InOrStdin(), maxImportBytes)
			if err != nil {
				return usageError{fmt.Errorf("import file %q: %w", args[0], err)}
			}
			items, err := parseImport(data)
			if err != nil {
				return usageError{err}
			}
			for i, it := range items {
				spec, err := kvstore.DecodeSpec(it.Spec)
				if err == nil && it.ID == "" {
					it.ID = cmp.Or(spec.ID, kvstore.DefaultKey(spec)) // the id the API derives
					items[i] = it
				}
				if err == nil {
					err = compile.Validate(spec, it.ID, nil)
				}
				if err != nil {
					return usageError{fmt.Errorf("item %d (id %q): %s", i+1, it.ID, usererr.Message(err))}
				}
			}
			nc, err := a.connectAPI()
			if err != nil {
				return err
			}
			defer nc.Close()
			batches, err := importBatches(items, nc.MaxPayload())
			if err != nil {
				return err
			}
			if !noCheck {
				t, err := a.importPass(cmd.Context(), nc, batches, len(items), true, false)
				if err != nil {
					return err
				}
				if len(t.failures) > 0 {
					a.reportFailures(t.failures[1:])
					f := t.failures[0]
					return itemFailure(f, "nothing was written")
				}
			}
			t, err := a.importPass(cmd.Context(), nc, batches, len(items), false, keepGoing)
			if err != nil {
				return err
			}
			a.reportFailures(t.failures)
			imported := t.saved + t.unchanged
			if a.jsonOut {
				if err := writeJSON(a.stdout, map[string]int{"imported": imported, "written": t.saved, "unchanged": t.unchanged, "failed": len(t.failures)}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.stdout, "%d schedule(s) imported (%d written, %d unchanged), %d failed\n", imported, t.saved, t.unchanged, len(t.failures))
			}
			if len(t.failures) > 0 && !keepGoing {
				f := t.failures[0]
				return itemFailure(f, fmt.Sprintf("import stopped (%d of %d imported)", imported, len(items)))
			}
			if len(t.failures) > 0 {
				return fmt.Errorf("%d item(s) failed", len(t.failures))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepGoing, "keep-going", false, "go on after an item the API refuses")
	cmd.Flags().BoolVar(&noCheck, "no-check", false, "skip the first pass that has the API check every item (calendars, static schedules, one-shots in the past) before anything is written")
	return cmd
}

// parseImport reads a JSON array or JSON lines.
func parseImport(data []byte) ([]importItem, error) {
	trimmed := bytes.TrimSpace(data)
	var items []importItem
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, fmt.Errorf("import file: not a JSON array of {id, spec}: %w", err)
		}
		return items, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var it importItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			return nil, fmt.Errorf("import file line %d: %w", n, err)
		}
		items = append(items, it)
	}
	return items, sc.Err()
}
