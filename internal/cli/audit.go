package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/internal/regfile"
	"github.com/jetsched/jetsched/pkg/audit"
)

// auditKey is the audit trail's key from --audit-key-file or
// JETSCHED_AUDIT_KEY; nil when neither is given (no audit).
func (a *app) auditKey() ([]byte, error) {
	if a.auditKeyFile == "" && os.Getenv("JETSCHED_AUDIT_KEY") == "" {
		return nil, nil
	}
	if a.auditKeyFile != "" {
		if err := regfile.Check(a.auditKeyFile); err != nil {
			return nil, usageError{fmt.Errorf("--audit-key-file: %w", err)}
		}
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
	cmd := &cobra.Command{Use: "audit", Short: "The tamper-evident audit trail (SCHED_AUDIT), and every schedule's slots accounted for"}
	var (
		o    audit.VerifyOptions
		head string
	)
	verify := &cobra.Command{
		Use:   "verify [--from SEQ] [--expect-head SEQ:MAC] [--dispatches] [--revisions]",
		Short: "Walk the trail, check it against its anchored head, and name the first broken link",
		Long: `Walk the audit trail from the last checkpoint (or --from) and name the
first broken link; check that the trail still extends the head anchored in
the bucket sched_audit_head (a trail deleted and recreated, cut back or
replaced does not) and, with --expect-head, a head you kept elsewhere (the
"head:" line of an earlier run); list the external changes (written
straight into the buckets) the walk passes. With --dispatches, read again
every fire and wakeup message the dispatch digests vouch for, and name
each one deleted, altered or injected, with its sequence and what differs;
messages gone by the stream's retention are counted, not reported. With
--revisions, read the latest revision of every schedule, calendar and timer
and check that the trail entry its Sched-Audit-Seq header names is its
intent (a revision naming another entry fails verify; one naming none, written
straight into the bucket or before write-ahead, is listed).

An account without JetStream (natsconf's OPS) reads the streams through
the services it imports under --js-api-prefix; when neither it nor
--js-domain is given and $JS.API.INFO answers that JetStream is not
enabled for the account, JS.jetsched.API is used.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := a.auditKey()
			if err != nil {
				return err
			}
			if key == nil {
				return invalidf("audit verify needs the key: --audit-key-file or JETSCHED_AUDIT_KEY")
			}
			if head != "" {
				h, err := audit.ParseHead(head)
				if err != nil {
					return usageError{fmt.Errorf("--expect-head: %w", err)}
				}
				o.ExpectHead = &h
			}
			if err := a.conn.Validate(); err != nil {
				return usageError{err}
			}
			conn := a.conn
			conn.Name = "jetsched cli"
			nc, err := natsconn.Connect(conn)
			if err != nil {
				return err
			}
			defer nc.Close()
			r, err := verifyTrail(cmd.Context(), nc, conn, key, o)
			if err != nil {
				return err
			}
			return a.printVerify(r)
		},
	}
	fl := verify.Flags()
	fl.Uint64Var(&o.From, "from", 0, "start at this stream sequence (default: the last checkpoint; all digests with --dispatches)")
	fl.StringVar(&head, "expect-head", "", "SEQ:MAC: a head kept outside NATS that the trail must still hold")
	fl.BoolVar(&o.Dispatches, "dispatches", false, "also read again the fire and wakeup messages the dispatch digests cover")
	fl.BoolVar(&o.Revisions, "revisions", false, "also check that the latest revision of every schedule, calendar and timer names its intent in the trail")
	fl.BoolVar(&a.jsonOut, "json", false, "print the report as JSON")
	cmd.AddCommand(verify, a.auditSlots())
	return cmd
}

// verifyTrail verifies through the JetStream context conn names
// (--js-domain, --js-api-prefix). Without either, an account without
// JetStream (it answers $JS.API.INFO with "not enabled", as natsconf's OPS
// does) reads under natsperm.APIPrefix.
func verifyTrail(ctx context.Context, nc *nats.Conn, conn natsconn.Options, key []byte, o audit.VerifyOptions) (audit.Report, error) {
	js, err := natsconn.JetStream(nc, conn)
	if err != nil {
		return audit.Report{}, err
	}
	if conn.JSDomain == "" && conn.JSAPIPrefix == "" {
		_, err = js.AccountInfo(ctx)
		switch {
		case errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount), errors.Is(err, jetstream.ErrJetStreamNotEnabled):
			conn.JSAPIPrefix = natsperm.APIPrefix
			if js, err = natsconn.JetStream(nc, conn); err != nil {
				return audit.Report{}, err
			}
		case err != nil:
			return audit.Report{}, fmt.Errorf("JetStream account info: %w", err)
		}
	}
	return audit.Verify(ctx, js, key, o)
}

// printVerify prints the report and fails when anything is broken, rolled
// back or tampered with.
func (a *app) printVerify(r audit.Report) error {
	if a.jsonOut {
		if err := writeJSON(a.stdout, r); err != nil {
			return err
		}
	} else {
		w := a.stdout
		if r.Broken == "" {
			fmt.Fprintf(w, "audit trail intact: %d entries verified, sequences %d to %d\n", r.Entries, r.From, r.To)
		}
		fmt.Fprintf(w, "head: %s (stream %s created %s)\n", r.Head, r.Head.Stream, r.Head.Created.Format(time.RFC3339Nano))
		if r.Anchored != nil {
			fmt.Fprintf(w, "anchored head: %s (anchored %s by %s)\n", r.Anchored, r.Anchored.At.Format(time.RFC3339), r.Anchored.By)
		}
		for _, c := range r.External {
			fmt.Fprintf(w, "external change at entry %d: %s %q revision %d %s at %s", c.Entry, c.Bucket, c.Key, c.Rev, c.Op, c.At.Format(time.RFC3339Nano))
			if c.SHA256 != "" {
				fmt.Fprintf(w, ", value sha256 %s", c.SHA256)
			}
			fmt.Fprintln(w)
		}
		if d := r.Dispatches; d != nil {
			fmt.Fprintf(w, "dispatches: %d digests, %d messages checked, %d expired by retention\n", d.Digests, d.Checked, d.Expired)
			for _, f := range d.Findings {
				fmt.Fprintf(w, "  %s\n", f)
			}
			for _, s := range d.Undigested {
				fmt.Fprintf(w, "  not yet digested: %s sequences %d to %d\n", s.Stream, s.First, s.Last)
			}
		}
		if rv := r.Revisions; rv != nil {
			fmt.Fprintf(w, "revisions: %d checked, %d naming no intent, %d forged\n", rv.Checked, len(rv.Unlinked), len(rv.Forged))
			for _, x := range rv.Forged {
				fmt.Fprintf(w, "  forged: %s\n", x)
			}
			for _, x := range rv.Unlinked {
				fmt.Fprintf(w, "  no intent: %s\n", x)
			}
		}
	}
	var errs []error
	if r.Broken != "" {
		errs = append(errs, fmt.Errorf("audit trail broken at sequence %d: %s", r.BrokenSeq, r.Broken))
	}
	if r.Rollback != "" {
		errs = append(errs, fmt.Errorf("audit trail rolled back: %s", r.Rollback))
	}
	if len(r.ForgedAnchors) > 0 {
		errs = append(errs, fmt.Errorf("anchored heads not signed with the key (forged) at head bucket sequences %v", r.ForgedAnchors))
	}
	if d := r.Dispatches; d != nil && len(d.Findings) > 0 {
		errs = append(errs, fmt.Errorf("dispatches tampered with: %d finding(s)", len(d.Findings)))
	}
	if rv := r.Revisions; rv != nil && len(rv.Forged) > 0 {
		errs = append(errs, fmt.Errorf("revisions naming an entry that is not their intent: %d, the first %s", len(rv.Forged), rv.Forged[0]))
	}
	return errors.Join(errs...)
}
