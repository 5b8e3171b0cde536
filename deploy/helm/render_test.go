package helm_test

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/release"
)

// chartDir is the chart under test.
const chartDir = "jetsched"

// namespace is where the tests install it.
const namespace = "jetsched"

// kubeVersion is the cluster version the chart is rendered for: that of
// the k8s.io/api and client-go modules whose schemas validate it (without
// it Helm assumes v1.20, below the chart's kubeVersion).
var kubeVersion = &chartutil.KubeVersion{Version: "v1.37.0", Major: "1", Minor: "37"}

// readValues reads a values file ("" for the chart's defaults alone).
func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatalf("values %s: %v", file, err)
	}
	return v.AsMap()
}

// render is `helm template` of the chart with the values file: an
// install, dry run, client only, with no cluster.
func render(t *testing.T, file string) (*release.Release, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	inst := action.NewInstall(&action.Configuration{})
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName, inst.Namespace, inst.KubeVersion = "jetsched", namespace, kubeVersion
	return inst.Run(ch, readValues(t, file))
}

// lintMessages is `helm lint --strict` of the chart with the values file:
// the messages of warning severity and above.
func lintMessages(t *testing.T, file string) []support.Message {
	t.Helper()
	var out []support.Message
	for _, m := range lint.AllWithKubeVersion(chartDir, readValues(t, file), namespace, kubeVersion).Messages {
		if m.Severity >= support.WarningSev {
			out = append(out, m)
		}
	}
	return out
}

// ciValues are the values files CI renders: ci/*.yaml, and "" for the
// defaults alone.
func ciValues(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 values files in %s/ci, got %v (%v)", chartDir, files, err)
	}
	return append([]string{""}, files...)
}

func name(file string) string {
	if file == "" {
		return "defaults"
	}
	return filepath.Base(file)
}
