package k8scheck

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkObject applies the rules the API server enforces on one object
// that decoding does not.
func checkObject(o Object) []error {
	var errs []error
	errs = append(errs, checkMeta(metaOf(o))...)
	switch t := o.Typed.(type) {
	case *appsv1.Deployment:
		errs = append(errs, checkDeployment(t)...)
	case *policyv1.PodDisruptionBudget:
		if (t.Spec.MinAvailable == nil) == (t.Spec.MaxUnavailable == nil) {
			errs = append(errs, fmt.Errorf("spec: exactly one of minAvailable and maxUnavailable"))
		}
		errs = append(errs, checkSelector("spec.selector", t.Spec.Selector)...)
	case *corev1.Service:
		if len(t.Spec.Ports) == 0 {
			errs = append(errs, fmt.Errorf("spec.ports: a Service needs a port"))
		}
	}
	return errs
}

func metaOf(o Object) metav1.Object {
	if m, ok := o.Typed.(metav1.Object); ok {
		return m
	}
	return &metav1.ObjectMeta{Name: o.Name}
}

// checkMeta: a DNS subdomain name, valid label keys and values.
func checkMeta(m metav1.Object) []error {
	var errs []error
	for _, msg := range validation.IsDNS1123Subdomain(m.GetName()) {
		errs = append(errs, fmt.Errorf("metadata.name %q: %s", m.GetName(), msg))
	}
	errs = append(errs, checkLabels("metadata.labels", m.GetLabels())...)
	return errs
}

func checkLabels(at string, l map[string]string) []error {
	var errs []error
	for k, v := range l {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("%s key %q: %s", at, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, fmt.Errorf("%s[%s] %q: %s", at, k, v, msg))
		}
	}
	return errs
}

func checkSelector(at string, s *metav1.LabelSelector) []error {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return []error{fmt.Errorf("%s: required and not empty (an empty selector selects every pod)", at)}
	}
	if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
		return []error{fmt.Errorf("%s: %w", at, err)}
	}
	return nil
}

// checkDeployment: the selector selects the template, whose containers
// are complete and whose probes and mounts name what exists.
func checkDeployment(d *appsv1.Deployment) []error {
	errs := checkSelector("spec.selector", d.Spec.Selector)
	if len(errs) == 0 {
		sel, _ := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			errs = append(errs, fmt.Errorf("spec.template.metadata.labels: do not match spec.selector %s (the API server refuses this)", sel))
		}
	}
	if d.Spec.Replicas != nil && *d.Spec.Replicas < 0 {
		errs = append(errs, fmt.Errorf("spec.replicas %d: must not be negative", *d.Spec.Replicas))
	}
	errs = append(errs, checkLabels("spec.template.metadata.labels", d.Spec.Template.Labels)...)
	return append(errs, checkPod("spec.template.spec", &d.Spec.Template.Spec)...)
}

func checkPod(at string, p *corev1.PodSpec) []error {
	var errs []error
	if len(p.Containers) == 0 {
		errs = append(errs, fmt.Errorf("%s.containers: at least one container", at))
	}
	volumes := map[string]bool{}
	for _, v := range p.Volumes {
		volumes[v.Name] = true
	}
	for i, c := range p.Containers {
		cat := fmt.Sprintf("%s.containers[%d]", at, i)
		if c.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: required", cat))
		}
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, fmt.Errorf("%s.image: required", cat))
		}
		for j, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				errs = append(errs, fmt.Errorf("%s.volumeMounts[%d].name %q: no such volume", cat, j, m.Name))
			}
		}
		for name, pr := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
			if pr == nil {
				continue
			}
			if port, ok := probePort(pr); ok && !containerHasPort(c, port) {
				errs = append(errs, fmt.Errorf("%s.%s: port %s is not a port of the container", cat, name, port.String()))
			}
			if pr.HTTPGet != nil && !strings.HasPrefix(pr.HTTPGet.Path, "/") {
				errs = append(errs, fmt.Errorf("%s.%s.httpGet.path %q: must start with /", cat, name, pr.HTTPGet.Path))
			}
		}
		for res, lim := range c.Resources.Limits {
			if req, ok := c.Resources.Requests[res]; ok && req.Cmp(lim) > 0 {
				errs = append(errs, fmt.Errorf("%s.resources.requests.%s %s: above the limit %s", cat, res, req.String(), lim.String()))
			}
		}
	}
	return errs
}

func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	}
	return intstr.IntOrString{}, false
}

// containerHasPort: a named port must be declared; a number need not be
// (the kubelet probes any), but a number the container declares by name
// is fine either way.
func containerHasPort(c corev1.Container, port intstr.IntOrString) bool {
	if port.Type == intstr.Int {
		return port.IntVal > 0 && port.IntVal < 65536
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return true
		}
	}
	return false
}
