package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/pkg/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// importItem is one schedule in an import file.
type importItem struct {
	ID   string          `json:"id"`
	Spec json.RawMessage `json:"spec"`
}

func (a *app) scheduleImport() *cobra.Command {
	var keepGoing bool
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: `Create or update many schedules from a file: a JSON array or JSON lines of {"id": ..., "spec": {...}}`,
		Long: `Create or update many schedules from a file: a JSON array, or one JSON
object per line, each {"id": ID, "spec": SPEC} with SPEC as in docs/records.md
(without an id, the spec's content hash, as schedule add gives it).
Every item is validated first: an invalid file writes nothing. A progress
line shows on standard error.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readInput(args[0], cmd.InOrStdin())
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
					err = spec.Validate(it.ID)
				}
				if err != nil {
					return usageError{fmt.Errorf("item %d (id %q): %s", i+1, it.ID, kvstore.UserMessage(err))}
				}
			}
			done, failed := 0, 0
			for i, it := range items {
				if err := a.call(cmd.Context(), "schedule.create", admin.PutRequest{ID: it.ID, Spec: it.Spec, Upsert: true}, nil); err != nil {
					failed++
					fmt.Fprintf(a.stderr, "\ritem %d (id %q): %v\n", i+1, it.ID, err)
					if !keepGoing {
						return fmt.Errorf("import stopped at item %d of %d (%d written)", i+1, len(items), done)
					}
					continue
				}
				done++
				if done%50 == 0 || done == len(items) {
					fmt.Fprintf(a.stderr, "\rimported %d/%d", done, len(items))
				}
			}
			fmt.Fprintln(a.stderr)
			if a.jsonOut {
				return writeJSON(a.stdout, map[string]int{"imported": done, "failed": failed})
			}
			fmt.Fprintf(a.stdout, "%d schedule(s) imported, %d failed\n", done, failed)
			if failed > 0 {
				return fmt.Errorf("%d item(s) failed", failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepGoing, "keep-going", false, "go on after an item the API refuses")
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
