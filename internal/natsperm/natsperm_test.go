package natsperm_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite natsconf/accounts.conf from the generator")

const accountsFile = "../../natsconf/accounts.conf"

// templateUsers are the users natsconf/accounts.conf ships.
func templateUsers(t *testing.T) []natsperm.User {
	t.Helper()
	s, err := natsperm.SchedulerUser(kvstore.Layout{}, "", natsperm.Credential{Password: "scheduler-secret"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := natsperm.WorkerUser(natsperm.Worker{Name: "billing", Workflows: []string{"invoices"},
		Credential: natsperm.Credential{Password: "worker-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := natsperm.OperatorUser(kvstore.Layout{}, "", natsperm.Credential{Password: "operator-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return []natsperm.User{s, w, o}
}

const accountsHeader = `# jetsched accounts: JETSCHED holds the buckets and streams, the
# scheduler and the workers; OPS holds the operators, who reach the admin
# API and the reads of ` + "`scheduler audit verify`" + ` only through services
# imported from JETSCHED (the API with the requester shared, so that the
# scheduler records the user the server reports). Each user has only what
# its role needs. Included by single.conf and the cluster configs. Replace
# the passwords (or use nkeys/JWTs) in production.
#
# The user blocks are printed by ` + "`scheduler natsconf`" + ` (internal/natsperm):
#   scheduler natsconf --role scheduler --password ...
#   scheduler natsconf --worker billing --workflows invoices --password ...
#   scheduler natsconf --role operator --password ...
# and internal/natsperm's test checks this file against it
# (` + "`go test ./internal/natsperm -update`" + ` rewrites it). Add one worker
# block per worker service to JETSCHED, and operators to OPS. No user of
# JETSCHED may publish on sched.api.>: the scheduler trusts the requester
# info only of requests from another account.

accounts {
  JETSCHED {
    jetstream: enabled
    users: [
`

// generatedAccounts is natsconf/accounts.conf as the generator prints it.
func generatedAccounts(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(accountsHeader)
	users := templateUsers(t)
	for _, u := range users[:2] {
		b.WriteString(u.Render("      "))
	}
	svcs := natsperm.OperatorServices(kvstore.Layout{})
	b.WriteString("    ]\n")
	b.WriteString(natsperm.RenderExports(svcs, "    "))
	b.WriteString("  }\n  " + natsperm.OperatorAccount + " {\n    users: [\n")
	b.WriteString(users[2].Render("      "))
	b.WriteString("    ]\n")
	b.WriteString(natsperm.RenderImports(svcs, natsperm.SchedulerAccount, "    "))
	b.WriteString("  }\n}\n")
	return b.String()
}

// TestTemplateIsGenerated: natsconf/accounts.conf is exactly the header
// and the generated blocks, so the shipped template and `scheduler
// natsconf` never drift apart.
func TestTemplateIsGenerated(t *testing.T) {
	var b strings.Builder
	b.WriteString(generatedAccounts(t))
	if *update {
		if err := os.WriteFile(accountsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(accountsFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Fatalf("natsconf/accounts.conf differs from the generated blocks (go test ./internal/natsperm -update rewrites it):\n%s", b.String())
	}
}

// TestTemplateLoadsAsGenerated: nats-server reads the shipped template
// into exactly the generated permissions.
func TestTemplateLoadsAsGenerated(t *testing.T) {
	opts, err := server.ProcessConfigFile(filepath.Join("..", "..", "natsconf", "single.conf"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*server.User{}
	for _, u := range opts.Users {
		byName[u.Username] = u
	}
	for _, want := range templateUsers(t) {
		got := byName[want.Name]
		if got == nil {
			t.Fatalf("user %q is not in the template", want.Name)
		}
		checkPermissions(t, want, got.Password, got.Permissions)
	}
}

func checkPermissions(t *testing.T, want natsperm.User, password string, p *server.Permissions) {
	t.Helper()
	if password != want.Password {
		t.Errorf("%s: password %q, want %q", want.Name, password, want.Password)
	}
	if p == nil || p.Publish == nil || p.Subscribe == nil {
		t.Fatalf("%s: no permissions", want.Name)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"publish allow", p.Publish.Allow, want.PublishAllow.Subjects()},
		{"publish deny", p.Publish.Deny, want.PublishDeny.Subjects()},
		{"subscribe allow", p.Subscribe.Allow, want.SubscribeAllow.Subjects()},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %s %q, want %q", want.Name, c.what, c.got, c.want)
		}
	}
	if (p.Response != nil) != want.AllowResponses {
		t.Errorf("%s: allow_responses %v, want %v", want.Name, p.Response != nil, want.AllowResponses)
	}
}

// TestWorkerRights: a worker is pinned to its workflows; every subject it
// may publish names one of them or one of its consumers.
func TestWorkerRights(t *testing.T) {
	u, err := natsperm.WorkerUser(natsperm.Worker{Name: "billing", Workflows: []string{"invoices", "refunds"}, Wakeups: true,
		Credential: natsperm.Credential{Password: `pa"ss\word`}})
	if err != nil {
		t.Fatal(err)
	}
	pub := u.PublishAllow.Subjects()
	for _, want := range []string{
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-refunds.sched.fire.refunds.>",
		"$JS.API.CONSUMER.CREATE.SCHED_FIRES.billing-fire-refunds-legacy.sched.fire.refunds",
		"$JS.API.CONSUMER.CREATE.SCHED_WAKEUPS.billing-wakeup-invoices.sched.wakeup.invoices",
		"$JS.API.CONSUMER.MSG.NEXT.SCHED_WAKEUPS.billing-wakeup-refunds",
		"$JS.ACK.SCHED_FIRES.billing-fire-invoices.>",
		"sched.done.refunds.>", "sched.event.dead_letter.invoices.>",
	} {
		if !slices.Contains(pub, want) {
			t.Errorf("missing %s in %q", want, pub)
		}
	}
	for _, s := range pub {
		if strings.Contains(s, "DURABLE") || strings.HasSuffix(s, ".fire.>") || s == "sched.done.>" ||
			!strings.Contains(s, "invoices") && !strings.Contains(s, "refunds") {
			t.Errorf("a worker may publish %s", s)
		}
	}
	if !slices.Equal(u.SubscribeAllow.Subjects(), []string{"_INBOX_billing-worker.>", "sched.cancel.invoices.>", "sched.cancel.refunds.>"}) {
		t.Errorf("subscribe %q", u.SubscribeAllow.Subjects())
	}
	// The rendered block is a valid config with the same rights (and the
	// password survives quoting).
	opts := loadUsers(t, u.Render("      "))
	if len(opts.Users) != 1 {
		t.Fatalf("%d users", len(opts.Users))
	}
	checkPermissions(t, u, opts.Users[0].Password, opts.Users[0].Permissions)
}

// TestNKeyUsers: --nkey takes a public user key or a seed file.
func TestNKeyUsers(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "op.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{pub, seedFile} {
		u, err := natsperm.OperatorUser(kvstore.Layout{}, "", natsperm.Credential{NKey: key})
		if err != nil {
			t.Fatal(err)
		}
		opts := loadUsers(t, u.Render("  "))
		if len(opts.Nkeys) != 1 || opts.Nkeys[0].Nkey != pub || opts.Nkeys[0].Permissions == nil {
			t.Fatalf("nkey users %+v", opts.Nkeys)
		}
	}
}

func loadUsers(t *testing.T, block string) *server.Options {
	t.Helper()
	file := filepath.Join(t.TempDir(), "users.conf")
	conf := "accounts {\n  A {\n    jetstream: enabled\n    users: [\n" + block + "    ]\n  }\n}\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("the rendered block does not load: %v\n%s", err, conf)
	}
	return opts
}

// TestInvalidInput: each bad input is refused naming what is wrong.
func TestInvalidInput(t *testing.T) {
	pw := natsperm.Credential{Password: "x"}
	for _, c := range []struct {
		name string
		w    natsperm.Worker
		want string
	}{
		{"no name", natsperm.Worker{Workflows: []string{"a"}, Credential: pw}, "worker"},
		{"dotted workflow", natsperm.Worker{Name: "b", Workflows: []string{"a", "x.y"}, Credential: pw}, `workflows: invalid workflow "x.y"`},
		{"wildcard workflow", natsperm.Worker{Name: "b", Workflows: []string{">"}, Credential: pw}, "workflows"},
		{"no workflow", natsperm.Worker{Name: "b", Credential: pw}, "at least one workflow"},
		{"twice", natsperm.Worker{Name: "b", Workflows: []string{"a", "a"}, Credential: pw}, "given twice"},
		{"bad user", natsperm.Worker{Name: "b", User: "a b", Workflows: []string{"a"}, Credential: pw}, "user"},
		{"no credential", natsperm.Worker{Name: "b", Workflows: []string{"a"}}, "password or an nkey is needed"},
		{"both credentials", natsperm.Worker{Name: "b", Workflows: []string{"a"}, Credential: natsperm.Credential{Password: "x", NKey: "y"}}, "not both"},
		{"bad nkey", natsperm.Worker{Name: "b", Workflows: []string{"a"}, Credential: natsperm.Credential{NKey: "UNOPE"}}, "neither a public user key"},
		{"newline in password", natsperm.Worker{Name: "b", Workflows: []string{"a"}, Credential: natsperm.Credential{Password: "a\nb"}}, "control characters"},
	} {
		_, err := natsperm.WorkerUser(c.w)
		if !errors.Is(err, natsperm.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid error naming %q", c.name, err, c.want)
		}
	}
}
