package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// statusRow is one schedule in `scheduler status`.
type statusRow struct {
	ID         string     `json:"id"`
	Next       *time.Time `json:"next,omitempty"`
	LastSlot   *time.Time `json:"last_slot,omitempty"`
	LastStatus string     `json:"last_status,omitempty"`
	Fires      uint64     `json:"fires"`
	Missed     uint64     `json:"missed"`
	Paused     string     `json:"paused,omitempty"`
	Running    string     `json:"running,omitempty"`
	Shard      int        `json:"shard"`
	Owner      string     `json:"owner,omitempty"`
	Invalid    string     `json:"invalid,omitempty"`
}

func (a *app) statusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Per schedule: next fire, last slot and status, misfires, pause, owning instance",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, done, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			rows, err := statusRows(cmd.Context(), store)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNEXT (UTC)\tLAST SLOT\tLAST STATUS\tFIRES\tMISSED\tPAUSED\tOWNER")
			for _, r := range rows {
				next, last := "-", "-"
				if r.Next != nil {
					next = r.Next.UTC().Format("2006-01-02 15:04:05")
				}
				if r.LastSlot != nil {
					last = r.LastSlot.UTC().Format("2006-01-02 15:04:05")
				}
				status := r.LastStatus
				if r.Invalid != "" {
					status = "INVALID: " + r.Invalid
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, next, last, orDash(status), r.Fires, r.Missed, orDash(r.Paused), orDash(r.Owner))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON instead of a human table")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func statusRows(ctx context.Context, store *kvstore.Store) ([]statusRow, error) {
	specs, bad, err := store.ListSpecs(ctx)
	if err != nil {
		return nil, err
	}
	shards, err := store.Shards(ctx)
	if err != nil {
		return nil, err
	}
	owners := leaseOwners(ctx, store)
	slices.SortFunc(specs, func(x, y kvstore.SpecEntry) int { return strings.Compare(x.ID, y.ID) })
	rows := make([]statusRow, 0, len(specs))
	for _, e := range specs {
		v := view(ctx, store, e, bad[e.ID])
		r := statusRow{ID: e.ID, Invalid: v.Invalid, Shard: fire.ShardOf(e.ID, shards), LastStatus: v.LastStatus, LastSlot: v.LastSlot}
		r.Owner = owners[r.Shard]
		if st := v.State; st != nil {
			if !st.Ended && !st.Next.IsZero() {
				n := st.Next
				r.Next = &n
			}
			r.Fires, r.Missed = st.Fires, st.Missed
			if p := st.Paused; p != nil {
				r.Paused = "yes"
				if p.Note != "" {
					r.Paused += ": " + p.Note
				}
				if !p.Until.IsZero() {
					r.Paused += " (until " + p.Until.UTC().Format(time.RFC3339) + ")"
				}
			}
			if st.Running != nil {
				r.Running = st.Running.SlotID
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// leaseOwners reads the owner of every live shard lease.
func leaseOwners(ctx context.Context, store *kvstore.Store) map[int]string {
	out := map[int]string{}
	kv := store.Leases()
	keys, err := kv.ListKeysFiltered(ctx, "shard.*")
	if err != nil {
		return out
	}
	defer keys.Stop()
	for k := range keys.Keys() {
		n, err := strconv.Atoi(strings.TrimPrefix(k, "shard."))
		if err != nil {
			continue
		}
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var v struct {
			Owner string `json:"owner"`
		}
		if json.Unmarshal(e.Value(), &v) == nil {
			out[n] = v.Owner
		}
	}
	return out
}
