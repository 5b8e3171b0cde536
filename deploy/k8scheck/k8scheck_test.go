package k8scheck

import (
	"strings"
	"testing"
)

// base is a small valid manifest: a Deployment, the Service and PDB
// selecting it, and a ServiceMonitor selecting the Service.
const base = `# Source: t/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: x}
spec:
  replicas: 2
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: main
          image: example/app:1
          ports:
            - {name: http, containerPort: 8080}
          readinessProbe:
            httpGet: {path: /readyz, port: http}
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
      volumes:
        - name: tmp
          emptyDir: {}
---
# Source: t/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: app
  labels: {app: x, role: metrics}
spec:
  selector: {app: x}
  ports:
    - {name: http, port: 80, targetPort: http}
---
# Source: t/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: app
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: x}
---
# Source: t/sm.yaml
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: app
spec:
  selector:
    matchLabels: {role: metrics}
  endpoints:
    - {port: http, interval: 30s, scrapeTimeout: 10s}
`

// TestValidManifest: the base manifest passes, every object decoded.
func TestValidManifest(t *testing.T) {
	t.Parallel()
	objs, err := New().Validate(base)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(objs) != 4 {
		t.Fatalf("got %d objects, want 4: %v", len(objs), objs)
	}
	if _, ok := objs[3].Typed.(*ServiceMonitor); !ok {
		t.Errorf("the ServiceMonitor decoded as %T", objs[3].Typed)
	}
}

// TestBrokenManifests: each break of the base manifest is refused with a
// message naming the field, so the validator can fail.
func TestBrokenManifests(t *testing.T) {
	t.Parallel()
	v := New()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown field", "  replicas: 2\n", "  replicas: 2\n  replicaz: 1\n", `unknown field "spec.replicaz"`},
		{"unknown field deep", "          image: example/app:1\n", "          image: example/app:1\n          imagePullPolicyy: Always\n", `unknown field "spec.template.spec.containers[0].imagePullPolicyy"`},
		{"wrong type", "  replicas: 2\n", "  replicas: two\n", "replicas"},
		{"duplicate key", "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", `key "replicas" already set`},
		{"duplicate container", "      volumes:\n", "        - {name: main, image: example/other:1}\n      volumes:\n", "duplicate entries for key [name=\"main\"]"},
		{"selector mismatch", "      labels: {app: x}\n    spec:", "      labels: {app: w}\n    spec:", "do not match spec.selector"},
		{"no image", "          image: example/app:1\n", "", ".image: required"},
		{"probe port", "port: http}\n          volumeMounts", "port: health}\n          volumeMounts", "readinessProbe: port health is not a port of the container"},
		{"mount without volume", "{name: tmp, mountPath: /tmp}", "{name: cache, mountPath: /tmp}", `volumeMounts[0].name "cache": no such volume`},
		{"service selects nothing", "  selector: {app: x}\n  ports:", "  selector: {app: z}\n  ports:", "Service/app (t/service.yaml): spec.selector app=z selects no pod template"},
		{"service target port", "targetPort: http}", "targetPort: web}", "targetPort web: no selected container declares it"},
		{"pdb selects nothing", "  maxUnavailable: 1\n  selector:\n    matchLabels: {app: x}", "  maxUnavailable: 1\n  selector:\n    matchLabels: {app: q}", "PodDisruptionBudget/app (t/pdb.yaml): spec.selector app=q selects no pod template"},
		{"pdb both", "  maxUnavailable: 1\n", "  maxUnavailable: 1\n  minAvailable: 1\n", "exactly one of minAvailable and maxUnavailable"},
		{"bad name", "  name: app\n  labels: {app: x}\nspec:\n  replicas", "  name: App_1\n  labels: {app: x}\nspec:\n  replicas", `metadata.name "App_1"`},
		{"servicemonitor unknown field", "    - {port: http, interval: 30s", "    - {portt: http, interval: 30s", `ServiceMonitor: json: unknown field "portt"`},
		{"servicemonitor duration", "interval: 30s, scrapeTimeout: 10s", "interval: 30 s, scrapeTimeout: 10s", `interval "30 s": not a Prometheus duration`},
		{"servicemonitor timeout", "interval: 30s, scrapeTimeout: 10s", "interval: 5s, scrapeTimeout: 10s", "longer than the interval"},
		{"servicemonitor selects nothing", "matchLabels: {role: metrics}", "matchLabels: {role: other}", "selects no Service"},
		{"unknown kind", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgett", "not a kind this validator knows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(base, tc.old) {
				t.Fatalf("the base manifest has no %q", tc.old)
			}
			_, err := v.Validate(strings.Replace(base, tc.old, tc.new, 1))
			if err == nil {
				t.Fatalf("the broken manifest passed; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
