package k8scheck

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkReferences: what selects or names another object of the manifest
// finds it. A Service or PodDisruptionBudget selecting no pod template,
// a Service targeting a port no selected container declares, or a
// ServiceMonitor selecting no Service, would be accepted by the API server
// and do nothing: that is what a chart's test is for.
func checkReferences(objs []Object) []error {
	var errs []error
	var pods []*corev1.PodTemplateSpec
	accounts := map[string]bool{"default": true}
	var services []*corev1.Service
	for _, o := range objs {
		switch t := o.Typed.(type) {
		case *appsv1.Deployment:
			pods = append(pods, &t.Spec.Template)
		case *corev1.ServiceAccount:
			accounts[t.Name] = true
		case *corev1.Service:
			services = append(services, t)
		}
	}
	for _, o := range objs {
		switch t := o.Typed.(type) {
		case *appsv1.Deployment:
			if sa := t.Spec.Template.Spec.ServiceAccountName; sa != "" && !accounts[sa] {
				errs = append(errs, fmt.Errorf("%s: spec.template.spec.serviceAccountName %q: no such ServiceAccount in the manifest", o, sa))
			}
		case *corev1.Service:
			errs = append(errs, checkService(o, t, pods)...)
		case *policyv1.PodDisruptionBudget:
			if sel, err := metav1.LabelSelectorAsSelector(t.Spec.Selector); err == nil && len(selected(sel, pods)) == 0 {
				errs = append(errs, fmt.Errorf("%s: spec.selector %s selects no pod template of the manifest", o, sel))
			}
		case *ServiceMonitor:
			errs = append(errs, checkServiceMonitor(o, t, services)...)
		}
	}
	return errs
}

func selected(sel labels.Selector, pods []*corev1.PodTemplateSpec) []*corev1.PodTemplateSpec {
	var out []*corev1.PodTemplateSpec
	for _, p := range pods {
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func checkService(o Object, s *corev1.Service, pods []*corev1.PodTemplateSpec) []error {
	if len(s.Spec.Selector) == 0 {
		return nil // endpoints managed by hand
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	matched := selected(sel, pods)
	if len(matched) == 0 {
		return []error{fmt.Errorf("%s: spec.selector %s selects no pod template of the manifest", o, sel)}
	}
	var errs []error
	for i, p := range s.Spec.Ports {
		if !podsHavePort(matched, p.TargetPort, p.Port) {
			errs = append(errs, fmt.Errorf("%s: spec.ports[%d].targetPort %s: no selected container declares it", o, i, p.TargetPort.String()))
		}
	}
	return errs
}

// podsHavePort: every selected template has the target port (by name, or
// by number among its declared ports; an unset target is the port).
func podsHavePort(pods []*corev1.PodTemplateSpec, target intstr.IntOrString, port int32) bool {
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(port)
	}
	for _, p := range pods {
		found := false
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if (target.Type == intstr.String && cp.Name == target.StrVal) || (target.Type == intstr.Int && cp.ContainerPort == target.IntVal) {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func checkServiceMonitor(o Object, sm *ServiceMonitor, services []*corev1.Service) []error {
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		return nil // reported by decodeServiceMonitor
	}
	var matched []*corev1.Service
	for _, s := range services {
		if sel.Matches(labels.Set(s.Labels)) {
			matched = append(matched, s)
		}
	}
	if len(matched) == 0 {
		return []error{fmt.Errorf("%s: spec.selector %s selects no Service of the manifest", o, sel)}
	}
	var errs []error
	for i, e := range sm.Spec.Endpoints {
		for _, s := range matched {
			if !servicePortNamed(s, e.Port) {
				errs = append(errs, fmt.Errorf("%s: spec.endpoints[%d].port %q: Service %s has no port of that name", o, i, e.Port, s.Name))
			}
		}
	}
	return errs
}

func servicePortNamed(s *corev1.Service, name string) bool {
	for _, p := range s.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}
