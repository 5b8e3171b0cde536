package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func (a *app) natsconfCommand() *cobra.Command {
	var (
		role, worker, workflows, conditions string
		wakeups                             bool
	)
	cmd := &cobra.Command{
		Use:   "natsconf (--worker NAME --workflows A,B [--wakeups] | --role scheduler [--condition-buckets A,B] | --role operator) (--password P | --nkey KEY)",
		Short: "Print a nats-server permission block for a worker pinned to its workflows, the scheduler or an operator",
		Long: `Print one user entry for the users list of an account in a nats-server
config (natsconf/accounts.conf holds one of each, printed by this command),
ready to paste. The scheduler and workers go into the account holding the
streams and buckets (JETSCHED); an operator goes into an account of its
own (OPS) that imports the admin API with share: true and the reads of
'scheduler audit verify' under the prefix JS.jetsched.API, as
natsconf/accounts.conf shows: the scheduler then records the user the
server reports as each API request's actor.

A worker (--worker NAME, the worker's consumer name prefix as in
worker.Config.Name) may create only its consumers NAME-fire-<workflow>
(and NAME-wakeup-<workflow> with --wakeups) with their filter in the
create subject, pull and ack on them, and report and dead-letter only on
its workflows' subjects. Its user name is NAME-worker unless --user says
otherwise; it must connect with the inbox prefix _INBOX_<user>
(--inbox-prefix; nats.CustomInboxPrefix in Go), the only replies it may
read.

--condition-buckets (with --role scheduler) gives the scheduler read-only
rights on the KV buckets of timers' condition keys (wakeup add
--condition-key BUCKET/KEY): it checks the bucket exists at registration
and reads the key when the timer falls due.

--password is the user's password (or a bcrypt hash); --nkey is a public
user nkey (U...) or a seed file whose public key is used. Nothing is
sent anywhere: this command does not connect.

  scheduler natsconf --worker billing --workflows invoices,refunds --password s3cret
  scheduler natsconf --role scheduler --nkey scheduler.nk
  scheduler natsconf --role scheduler --condition-buckets runs,orders --password s3cret`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := kvstore.ValidatePrefix(a.namePrefix); err != nil {
				return usageError{err}
			}
			l := kvstore.NamedLayout(a.namePrefix)
			cred := natsperm.Credential{Password: a.conn.Password, NKey: a.conn.NKey}
			if worker != "" && role == "" {
				role = "worker"
			}
			var u natsperm.User
			var err error
			switch role {
			case "worker":
				if worker == "" {
					return invalidf("--worker: a worker block needs the worker's name")
				}
				if workflows == "" {
					return invalidf("--workflows: a worker is pinned to its workflows: give them, comma-separated")
				}
				u, err = natsperm.WorkerUser(natsperm.Worker{Name: worker, User: a.conn.User, Workflows: strings.Split(workflows, ","),
					Wakeups: wakeups, Layout: l, Credential: cred})
			case "scheduler", "operator":
				if conditions != "" && role != "scheduler" {
					return invalidf("--condition-buckets: for --role scheduler (the scheduler reads condition keys)")
				}
				if worker != "" || workflows != "" || wakeups {
					return invalidf("--worker, --workflows and --wakeups are for a worker block, not --role %s", role)
				}
				if role == "scheduler" {
					var buckets []string
					if conditions != "" {
						buckets = strings.Split(conditions, ",")
					}
					u, err = natsperm.SchedulerUser(l, a.conn.User, cred, buckets...)
				} else {
					u, err = natsperm.OperatorUser(l, a.conn.User, cred)
				}
			case "":
				return invalidf("give --worker NAME --workflows A,B, or --role scheduler|operator")
			default:
				return invalidf("--role %q: want worker, scheduler or operator", role)
			}
			var ie *natsperm.InputError
			switch {
			case errors.As(err, &ie) && ie.Field == "credential":
				return invalidf("--password or --nkey: %s", ie.Reason)
			case errors.As(err, &ie):
				return invalidf("--%s: %s", ie.Field, ie.Reason)
			case err != nil:
				return err
			}
			_, err = fmt.Fprint(a.stdout, u.Render(""))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&role, "role", "", "worker (the default with --worker), scheduler or operator")
	fl.StringVar(&worker, "worker", "", "the worker's name: its consumers are <name>-fire-<workflow>")
	fl.StringVar(&workflows, "workflows", "", "the worker's workflows, comma-separated")
	fl.BoolVar(&wakeups, "wakeups", false, "the worker also consumes wakeups of its workflows")
	fl.StringVar(&conditions, "condition-buckets", "", "with --role scheduler: KV buckets of timers' condition keys it may read, comma-separated")
	return cmd
}
