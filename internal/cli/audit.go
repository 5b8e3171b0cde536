package cli

import (
	"fmt"
	"os"
	"os/user"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/audit"
)

// auditKey is the audit trail's key from --audit-key-file or
// JETSCHED_AUDIT_KEY; nil when neither is given (no audit).
func (a *app) auditKey() ([]byte, error) {
	if a.auditKeyFile == "" && os.Getenv("JETSCHED_AUDIT_KEY") == "" {
		return nil, nil
	}
	key, err := audit.LoadKey(a.auditKeyFile)
	if err != nil {
		return nil, usageError{fmt.Errorf("--audit-key-file: %w", err)}
	}
	return key, nil
}

// cliActor names the operator in audit entries: "cli:<user>@<host>".
func cliActor() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "cli:" + name + "@" + host
}

func (a *app) auditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The tamper-evident audit trail (SCHED_AUDIT)"}
	var from uint64
	verify := &cobra.Command{
		Use:   "verify [--from SEQ]",
		Short: "Walk the trail from the last checkpoint (or --from) and name the first broken link",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := a.auditKey()
			if err != nil {
				return err
			}
			if key == nil {
				return invalidf("audit verify needs the key: --audit-key-file or JETSCHED_AUDIT_KEY")
			}
			conn := a.conn
			conn.Name = "jetsched cli"
			nc, err := natsconn.Connect(conn)
			if err != nil {
				return err
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			r, err := audit.Verify(cmd.Context(), js, key, from)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else if r.Broken == "" {
				fmt.Fprintf(a.stdout, "audit trail intact: %d entries verified, sequences %d to %d\n", r.Entries, r.From, r.To)
			}
			if r.Broken != "" {
				return fmt.Errorf("audit trail broken at sequence %d: %s", r.BrokenSeq, r.Broken)
			}
			return nil
		},
	}
	verify.Flags().Uint64Var(&from, "from", 0, "start at this stream sequence (default: the last checkpoint)")
	verify.Flags().BoolVar(&a.jsonOut, "json", false, "print the report as JSON")
	cmd.AddCommand(verify)
	return cmd
}
