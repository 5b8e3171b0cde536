package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestNatsconfPrintsTheGeneratedBlock: the command prints exactly what
// natsperm generates (which natsconf/accounts.conf is checked against).
func TestNatsconfPrintsTheGeneratedBlock(t *testing.T) {
	code, out, errOut := runCLI("natsconf", "--worker", "billing", "--workflows", "invoices,refunds", "--wakeups", "--password", "s3cret")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, err := natsperm.WorkerUser(natsperm.Worker{Name: "billing", Workflows: []string{"invoices", "refunds"}, Wakeups: true,
		Credential: natsperm.Credential{Password: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	if out != want.Render("") {
		t.Fatalf("printed\n%s\nwant\n%s", out, want.Render(""))
	}
	code, out, errOut = runCLI("natsconf", "--role", "scheduler", "--user", "sched-a", "--password", "p", "--name-prefix", "acme")
	sched, _ := natsperm.SchedulerUser(kvstore.NamedLayout("acme"), "sched-a", natsperm.Credential{Password: "p"})
	if code != ExitOK || out != sched.Render("") || !strings.Contains(out, `"acme.fire.>"`) {
		t.Fatalf("scheduler block: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = runCLI("natsconf", "--role", "scheduler", "--password", "p", "--condition-buckets", "runs,orders")
	sched, _ = natsperm.SchedulerUser(kvstore.Layout{}, "", natsperm.Credential{Password: "p"}, "runs", "orders")
	if code != ExitOK || out != sched.Render("") || !strings.Contains(out, `"$JS.API.DIRECT.GET.KV_runs.>"`) ||
		!strings.Contains(out, `"$JS.API.STREAM.INFO.KV_orders"`) || strings.Contains(out, `"$KV.runs.>"`) {
		t.Fatalf("scheduler block with condition buckets (read only): exit %d %s\n%s", code, errOut, out)
	}
}

// TestNatsconfRefusesBadInput: exit 2 naming the flag, nothing printed.
func TestNatsconfRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--worker", "billing", "--workflows", "invoices,pay.roll", "--password", "p"}, `--workflows: invalid workflow "pay.roll"`},
		{[]string{"--worker", "billing", "--workflows", "a,,b", "--password", "p"}, "--workflows"},
		{[]string{"--worker", "billing", "--password", "p"}, "--workflows"},
		{[]string{"--worker", "bil ling", "--workflows", "a", "--password", "p"}, "--worker"},
		{[]string{"--worker", "billing", "--workflows", "a"}, "--password or --nkey"},
		{[]string{"--worker", "billing", "--workflows", "a", "--nkey", "UNOPE"}, "--nkey"},
		{[]string{"--role", "scheduler", "--workflows", "a", "--password", "p"}, "not --role scheduler"},
		{[]string{"--role", "admin", "--password", "p"}, `--role "admin"`},
		{[]string{"--password", "p"}, "--worker NAME"},
		{[]string{"--role", "scheduler", "--condition-buckets", "runs,ru.ns", "--password", "p"}, `--condition-buckets: "ru.ns"`},
		{[]string{"--role", "scheduler", "--condition-buckets", "runs,runs", "--password", "p"}, `--condition-buckets: "runs" is given twice`},
		{[]string{"--role", "operator", "--condition-buckets", "runs", "--password", "p"}, "--condition-buckets: for --role scheduler"},
	} {
		code, out, errOut := runCLI(append([]string{"natsconf"}, c.args...)...)
		if code != ExitInvalid || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, out, errOut, c.want)
		}
	}
}
