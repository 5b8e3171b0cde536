package helm_test

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint/support"
)

// TestBadValues: each values file of testdata/bad is refused by helm
// template with a message naming the value and why. The schema's refusals
// are lint errors too; a template's fail is not, by Helm's design (lint
// renders with fail turned into a log line), so that helm install and
// helm template are where those refuse.
func TestBadValues(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		want   []string
		schema bool // refused by values.schema.json, so lint errors too
	}{
		"wrong-type.yaml":              {[]string{"at '/replicaCount': got string, want integer"}, true},
		"unknown-key.yaml":             {[]string{"additional properties 'replicas' not allowed"}, true},
		"bucket-replicas.yaml":         {[]string{"at '/scheduler/bucketReplicas': maximum: got 7, want 5"}, true},
		"no-url.yaml":                  {[]string{"at '/nats/url': minLength: got 0, want 1"}, true},
		"nested-unknown.yaml":          {[]string{"at '/nats/tls': additional properties 'secretname' not allowed"}, true},
		"console-no-auth.yaml":         {[]string{"console.enabled: the console listens on the pod network and needs authentication: set console.auth.type"}, false},
		"console-token-no-secret.yaml": {[]string{"console.auth.secretName: console.auth.type token needs the Secret"}, false},
		"creds-and-nkey.yaml":          {[]string{"nats.creds.secretName and nats.nkey.secretName: give one"}, false},
	}
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) != len(cases) {
		t.Fatalf("testdata/bad holds %v (%v); the table covers %d files", files, err, len(cases))
	}
	for _, file := range files {
		tc, ok := cases[filepath.Base(file)]
		if !ok {
			t.Fatalf("%s: no expected message in the table", file)
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			_, err := render(t, file)
			if err == nil {
				t.Fatal("rendered; want it refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("render error %q\nlacks %q", err, w)
				}
			}
			if !tc.schema {
				return
			}
			var lintErrs []string
			for _, m := range lintMessages(t, file) {
				if m.Severity == support.ErrorSev {
					lintErrs = append(lintErrs, m.Err.Error())
				}
			}
			if got := strings.Join(lintErrs, "\n"); !strings.Contains(got, tc.want[0]) {
				t.Errorf("lint errors %q\nlack %q", got, tc.want[0])
			}
		})
	}
}

// TestValidatorCatchesBrokenRender: the validator the chart tests rely on
// refuses a rendered manifest broken by hand (an unknown field in the
// Deployment, a probe on a port the container lacks), so that a template
// mistake of that kind fails TestRenderValidates.
func TestValidatorCatchesBrokenRender(t *testing.T) {
	t.Parallel()
	rel, err := render(t, "jetsched/ci/minimal.yaml")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{"  revisionHistoryLimit: 5\n", "  revisionHistoryLimit: 5\n  revisionHistoryLimt: 5\n", `unknown field "spec.revisionHistoryLimt"`},
		{"      terminationGracePeriodSeconds: 60\n", "      terminationGracePeriodSeconds: sixty\n", "terminationGracePeriodSeconds"},
		{"              path: /readyz\n              port: metrics\n", "              path: /readyz\n              port: metric\n", "readinessProbe: port metric is not a port of the container"},
	} {
		if !strings.Contains(rel.Manifest, tc.old) {
			t.Fatalf("the rendered manifest has no %q", tc.old)
		}
		_, err := validator().Validate(strings.Replace(rel.Manifest, tc.old, tc.new, 1))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("broken by %q: error %v, want one containing %q", tc.new, err, tc.want)
		}
	}
}
