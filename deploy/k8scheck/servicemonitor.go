package k8scheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ServiceMonitorGVK is the Prometheus Operator's ServiceMonitor.
var ServiceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

// ServiceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) a chart of ours may set: a hand-written
// subset of the CRD's schema, decoded strictly, so that a field outside it
// (misspelt, or one the chart has no business setting) is an error. The
// CRD is not in client-go and its generated schema lives in the operator's
// module, too large a dependency for a test of one object.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorSpec selects the Services to scrape and says how.
type ServiceMonitorSpec struct {
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *NamespaceSelector   `json:"namespaceSelector,omitempty"`
	Endpoints         []Endpoint           `json:"endpoints"`
	JobLabel          string               `json:"jobLabel,omitempty"`
	TargetLabels      []string             `json:"targetLabels,omitempty"`
	PodTargetLabels   []string             `json:"podTargetLabels,omitempty"`
	SampleLimit       *int64               `json:"sampleLimit,omitempty"`
}

// NamespaceSelector picks the namespaces of the selected Services.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// Endpoint is one scraped port of the selected Services.
type Endpoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	HonorLabels   bool   `json:"honorLabels,omitempty"`
}

// DeepCopyObject makes ServiceMonitor a runtime.Object.
func (s *ServiceMonitor) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	s.Spec.Selector.DeepCopyInto(&c.Spec.Selector)
	c.Spec.Endpoints = append([]Endpoint(nil), s.Spec.Endpoints...)
	return &c
}

// promDuration is the CRD's pattern of a Prometheus duration.
var promDuration = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// decodeServiceMonitor decodes js strictly and checks what the CRD's
// schema and the operator require.
func decodeServiceMonitor(js []byte) (*ServiceMonitor, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var sm ServiceMonitor
	if err := dec.Decode(&sm); err != nil {
		return nil, fmt.Errorf("ServiceMonitor: %w", err)
	}
	var errs []error
	if len(sm.Spec.Endpoints) == 0 {
		errs = append(errs, errors.New("spec.endpoints: at least one endpoint"))
	}
	if _, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector); err != nil {
		errs = append(errs, fmt.Errorf("spec.selector: %w", err))
	}
	for i, e := range sm.Spec.Endpoints {
		at := fmt.Sprintf("spec.endpoints[%d]", i)
		if e.Port == "" {
			errs = append(errs, fmt.Errorf("%s.port: the Service port's name is required", at))
		}
		if e.Scheme != "" && e.Scheme != "http" && e.Scheme != "https" {
			errs = append(errs, fmt.Errorf("%s.scheme %q: want http or https", at, e.Scheme))
		}
		for field, d := range map[string]string{"interval": e.Interval, "scrapeTimeout": e.ScrapeTimeout} {
			if d != "" && !promDuration.MatchString(d) {
				errs = append(errs, fmt.Errorf("%s.%s %q: not a Prometheus duration such as 30s", at, field, d))
			}
		}
		iv, errI := time.ParseDuration(e.Interval)
		to, errT := time.ParseDuration(e.ScrapeTimeout)
		if errI == nil && errT == nil && to > iv {
			errs = append(errs, fmt.Errorf("%s.scrapeTimeout %s: longer than the interval %s (Prometheus refuses it)", at, e.ScrapeTimeout, e.Interval))
		}
	}
	return &sm, errors.Join(errs...)
}
