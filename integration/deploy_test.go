package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testhttp"
	"github.com/jetsched/jetsched/internal/testwait"
)

// alertRules is the shape of a Prometheus rule file, decoded strictly: a
// misspelt key is an error.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// dashboard is the part of the Grafana dashboard the test reads.
type dashboard struct {
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName finds the metric names in a PromQL expression.
var metricName = regexp.MustCompile(`\b(jetsched_[a-z0-9_]+|process_[a-z0-9_]+|go_[a-z0-9_]+)\b`)

// exported is the set of series names a scrape shows: every family's
// name, with a histogram's _bucket, _sum and _count.
func exported(scrape string) map[string]bool {
	names := map[string]bool{}
	for line := range strings.Lines(scrape) {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		if f[3] == "histogram" || f[3] == "summary" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[f[2]+suffix] = true
			}
		}
	}
	return names
}

// TestDeployMetricsExported checks deploy/grafana/jetsched.json and
// deploy/prometheus/jetsched-alerts.yaml against a running scheduler:
// every metric they name is exported, and docs/operations.md lists every
// exported jetsched metric, every panel and every alert.
func TestDeployMetricsExported(t *testing.T) {
	raw, err := os.ReadFile("../deploy/prometheus/jetsched-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("jetsched-alerts.yaml: %v", err)
	}
	raw, err = os.ReadFile("../deploy/grafana/jetsched.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash dashboard
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("jetsched.json: %v", err)
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}

	named := map[string][]string{} // metric -> where it is used
	var alerts, panels []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("alert %q: needs alert, expr, labels.severity and annotations.summary", r.Alert)
			}
			alerts = append(alerts, r.Alert)
			for _, m := range metricName.FindAllString(r.Expr, -1) {
				named[m] = append(named[m], "alert "+r.Alert)
			}
		}
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		panels = append(panels, p.Title)
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				named[m] = append(named[m], "panel "+p.Title)
			}
		}
	}
	if len(alerts) < 6 || len(panels) < 10 {
		t.Fatalf("%d alerts and %d panels read: the files were not parsed as expected", len(alerts), len(panels))
	}

	// A scheduler with a schedule that fires, one held back by its overlap
	// policy (overdue) and a pending timer: what a scrape shows then.
	d := startDaemon(t, daemon.Config{MetricsListen: "127.0.0.1:0", DeadManTolerance: time.Second})
	run := cliRunner(d)
	for _, args := range [][]string{
		{"schedule", "add", "--id", "tick", "--workflow", "wf", "--every", "1s"},
		{"schedule", "add", "--id", "held", "--workflow", "wf", "--every", "1s", "--overlap", "buffer_all"},
		{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "1h"},
	} {
		if code, _, errOut := run(args...); code != cli.ExitOK {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	var have map[string]bool
	err = testwait.Until(20*time.Second, "every metric the dashboard and the alerts name in a scrape", func() error {
		_, body := testhttp.Get(t, "http://"+d.MetricsAddr()+"/metrics")
		have = exported(body)
		var missing []string
		for m := range named {
			if !have[m] {
				missing = append(missing, m+" ("+strings.Join(named[m], ", ")+")")
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return fmt.Errorf("not exported: %s", strings.Join(missing, "; "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for m := range have {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(m, "jetsched_") && !bytes.Contains(doc, []byte("`"+base+"`")) {
			t.Errorf("docs/operations.md does not list the metric %s", base)
		}
	}
	for _, p := range panels {
		if !bytes.Contains(doc, []byte(p)) {
			t.Errorf("docs/operations.md does not name the dashboard panel %q", p)
		}
	}
	for _, a := range alerts {
		if !bytes.Contains(doc, []byte("| "+a+" |")) {
			t.Errorf("docs/operations.md does not describe the alert %s", a)
		}
	}
}
