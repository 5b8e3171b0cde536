package helm_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/jetsched/jetsched/deploy/k8scheck"
)

// validator is built once for the package's tests (it parses client-go's
// embedded schema).
var validator = sync.OnceValue(k8scheck.New)

// TestLint: helm lint passes every CI values file and the defaults with
// no error and no warning (nothing is ignored).
func TestLint(t *testing.T) {
	t.Parallel()
	for _, file := range ciValues(t) {
		t.Run(name(file), func(t *testing.T) {
			t.Parallel()
			for _, m := range lintMessages(t, file) {
				t.Errorf("lint: %s", m)
			}
		})
	}
}

// TestRenderValidates: every CI values file renders, and every rendered
// object passes the Kubernetes validation of package k8scheck.
func TestRenderValidates(t *testing.T) {
	t.Parallel()
	for _, file := range ciValues(t) {
		t.Run(name(file), func(t *testing.T) {
			t.Parallel()
			objs := renderObjects(t, file)
			if deployment(t, objs) == nil {
				t.Fatal("no Deployment rendered")
			}
		})
	}
}

// renderObjects renders the chart with file and validates the manifest.
func renderObjects(t *testing.T, file string) []k8scheck.Object {
	t.Helper()
	rel, err := render(t, file)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs, err := validator().Validate(rel.Manifest)
	if err != nil {
		t.Fatalf("the rendered manifest is invalid:\n%v\n--- manifest:\n%s", err, rel.Manifest)
	}
	return objs
}

func deployment(t *testing.T, objs []k8scheck.Object) *appsv1.Deployment {
	t.Helper()
	var found *appsv1.Deployment
	for _, o := range objs {
		if d, ok := o.Typed.(*appsv1.Deployment); ok {
			if found != nil {
				t.Fatal("more than one Deployment")
			}
			found = d
		}
	}
	return found
}

func kinds(objs []k8scheck.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GVK.Kind+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// TestProductionContent: the production values render what they ask
// for: replicas, the NATS flags pointing into the mounted Secrets, probes,
// the hardened security context, and the optional objects.
func TestProductionContent(t *testing.T) {
	t.Parallel()
	objs := renderObjects(t, "jetsched/ci/production.yaml")
	want := []string{"Deployment/jetsched", "PodDisruptionBudget/jetsched", "Service/jetsched-console", "Service/jetsched-metrics",
		"ServiceAccount/jetsched", "ServiceMonitor/jetsched"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	d := deployment(t, objs)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "ghcr.io/jetsched/scheduler:0.1.0" || !slices.Equal(c.Command, []string{"/scheduler"}) {
		t.Errorf("image %q command %v", c.Image, c.Command)
	}
	args := c.Args
	if args[0] != "run" {
		t.Errorf("args start %q, want run", args[0])
	}
	for _, a := range []string{
		"--nats-url=tls://nats-0.nats.nats.svc:4222,tls://nats-1.nats.nats.svc:4222,tls://nats-2.nats.nats.svc:4222",
		"--replicas=3", "--instance=$(POD_NAME)", "--metrics-listen=0.0.0.0:9464",
		"--console-listen=0.0.0.0:8090", "--events=default,fired", "--workers=32",
	} {
		if !slices.Contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
	// Each file flag names a file of the Secret mounted there.
	for flag, secret := range map[string]string{
		"--creds": "jetsched-nats-creds", "--tls-ca": "jetsched-nats-tls", "--tls-cert": "jetsched-nats-tls", "--tls-key": "jetsched-nats-tls",
		"--audit-key-file": "jetsched-audit-key", "--console-auth": "jetsched-console-tokens",
	} {
		file := flagValue(t, args, flag)
		file = file[strings.Index(file, "/"):] // token:/etc/... for the console
		if got := mountedSecret(t, pod, file); got != secret {
			t.Errorf("%s %s: file of Secret %q, want %q", flag, file, got, secret)
		}
	}
	if got := flagValue(t, args, "--creds"); got != "/etc/jetsched/nats/creds/scheduler.creds" {
		t.Errorf("--creds %s", got)
	}
	if got := flagValue(t, args, "--console-auth"); got != "token:/etc/jetsched/console/tokens" {
		t.Errorf("--console-auth %s", got)
	}
	// The console answers to its Service's names and the Ingress's host.
	if got, want := flagValue(t, args, "--console-allowed-hosts"), "jetsched-console,jetsched-console.jetsched,jetsched-console.jetsched.svc,jetsched-console.jetsched.svc.cluster.local,console.example.com"; got != want {
		t.Errorf("--console-allowed-hosts %s, want %s", got, want)
	}
	if i := slices.Index(args, "--workers=32"); i < slices.Index(args, "--console-listen=0.0.0.0:8090") {
		t.Errorf("extraArgs come before the chart's flags: %v", args)
	}
	checkProbes(t, c)
	checkHardened(t, pod, c)
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil || len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("podAntiAffinity hard: affinity %+v", pod.Affinity)
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 30 {
		t.Errorf("terminationGracePeriodSeconds %v, want at least 30", pod.TerminationGracePeriodSeconds)
	}
	for _, o := range objs {
		if s, ok := o.Typed.(*corev1.Service); ok && s.Name == "jetsched-console" && s.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
			t.Errorf("console Service sessionAffinity %q, want ClientIP (CSRF keys are per pod)", s.Spec.SessionAffinity)
		}
	}
}

// TestDefaultContent: the defaults are 3 replicas, 3 bucket replicas,
// soft anti-affinity across nodes and a PDB of maxUnavailable 1, and the
// notes tell the operator which NATS permissions to give.
func TestDefaultContent(t *testing.T) {
	t.Parallel()
	rel, err := render(t, "")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs, err := validator().Validate(rel.Manifest)
	if err != nil {
		t.Fatalf("invalid: %v", err)
	}
	d := deployment(t, objs)
	if *d.Spec.Replicas != 3 || !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--replicas=3") {
		t.Errorf("replicas %d, args %v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Args)
	}
	if s := d.Spec.Strategy.RollingUpdate; s == nil || s.MaxUnavailable.IntValue() != 0 || s.MaxSurge.IntValue() != 1 {
		t.Errorf("rolling update %+v, want maxSurge 1 maxUnavailable 0", s)
	}
	aa := d.Spec.Template.Spec.Affinity.PodAntiAffinity
	if len(aa.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || aa.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity %+v, want preferred across kubernetes.io/hostname", aa)
	}
	for _, o := range objs {
		if p, ok := o.Typed.(*policyv1.PodDisruptionBudget); ok && p.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("PDB maxUnavailable %v, want 1", p.Spec.MaxUnavailable)
		}
	}
	for _, want := range []string{"scheduler natsconf --role scheduler --name-prefix sched", "curl -s localhost:9464/readyz"} {
		if !strings.Contains(rel.Info.Notes, want) {
			t.Errorf("notes lack %q:\n%s", want, rel.Info.Notes)
		}
	}
}

// TestDevContent: the single-replica values drop the PDB and the metrics
// Service, and pass the proxy console and bucket replicas 1.
func TestDevContent(t *testing.T) {
	t.Parallel()
	objs := renderObjects(t, "jetsched/ci/dev-single.yaml")
	want := []string{"Deployment/jetsched", "Service/jetsched-console", "ServiceAccount/jetsched"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	args := deployment(t, objs).Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{"--replicas=1", "--nkey=/etc/jetsched/nats/nkey/scheduler.nk", "--js-domain=hub", "--console-auth=proxy:X-Forwarded-User",
		"--console-trusted-proxies=10.0.0.0/8", "--console-operators=alice,bob", "--console-read-only", "--name-prefix=dev"} {
		if !slices.Contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
}

func flagValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	t.Fatalf("args %v lack %s", args, flag)
	return ""
}

// mountedSecret is the Secret whose volume is mounted at file's directory.
func mountedSecret(t *testing.T, pod corev1.PodSpec, file string) string {
	t.Helper()
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.MountPath != path.Dir(file) {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName
			}
		}
	}
	return fmt.Sprintf("(nothing mounted at %s)", path.Dir(file))
}

func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	for name, want := range map[string]struct {
		p    *corev1.Probe
		path string
	}{"liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}, "startup": {c.StartupProbe, "/healthz"}} {
		if want.p == nil || want.p.HTTPGet == nil {
			t.Errorf("%s probe missing", name)
			continue
		}
		if want.p.HTTPGet.Path != want.path || want.p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %s on %s, want %s on metrics", name, want.p.HTTPGet.Path, want.p.HTTPGet.Port.String(), want.path)
		}
	}
	if s := c.StartupProbe; s != nil && s.PeriodSeconds*s.FailureThreshold < 120 {
		t.Errorf("startup probe allows %ds, want at least 2 minutes for a cold start", s.PeriodSeconds*s.FailureThreshold)
	}
}

func checkHardened(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	ps, cs := pod.SecurityContext, c.SecurityContext
	switch {
	case ps == nil || cs == nil:
		t.Fatal("security contexts missing")
	case ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != 65532:
		t.Errorf("pod runs as %v (non-root %v), want 65532", ps.RunAsUser, ps.RunAsNonRoot)
	case ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("seccomp %+v, want RuntimeDefault", ps.SeccompProfile)
	case cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem:
		t.Error("root filesystem writable")
	case cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want drop ALL", cs.Capabilities)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("service account token mounted")
	}
}

// TestPasswordNotInArgs: a user and password from a Secret reach the
// scheduler as JETSCHED_USER and JETSCHED_PASSWORD (run's environment form
// of --user and --password), never as arguments, which every process on
// the node could read.
func TestPasswordNotInArgs(t *testing.T) {
	t.Parallel()
	c := deployment(t, renderObjects(t, "jetsched/ci/minimal.yaml")).Spec.Template.Spec.Containers[0]
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--password") || strings.HasPrefix(a, "--user") {
			t.Errorf("argument %q: the credentials are in the process list", a)
		}
	}
	from := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			from[e.Name] = e.ValueFrom.SecretKeyRef.Key
		}
	}
	if from["JETSCHED_USER"] == "" || from["JETSCHED_PASSWORD"] == "" {
		t.Errorf("env from Secrets %v: want JETSCHED_USER and JETSCHED_PASSWORD", from)
	}
}
