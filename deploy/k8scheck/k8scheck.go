// Package k8scheck validates rendered Kubernetes manifests offline, as far
// as that can be done without an API server: every document is decoded
// strictly into its typed k8s.io/api object through the client-go scheme
// (unknown or duplicate fields and wrong types are errors), checked against
// the structural schema client-go embeds, generated from the API server's
// OpenAPI (undeclared fields, wrong types, duplicate keys of associative
// lists such as two containers or env vars of one name), and then held to
// rules the API server or the controllers apply that neither decoding
// sees: names and labels, a Deployment's selector matching its template,
// probe and Service ports that exist, volume mounts naming volumes, and
// the objects that select others (Services, PodDisruptionBudgets,
// ServiceMonitors) selecting something. ServiceMonitor, a custom resource
// whose schema is not in client-go, is decoded strictly into the small
// hand-written shape of servicemonitor.go.
package k8scheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Object is one validated document of a manifest.
type Object struct {
	// Source is the template that rendered it (Helm's "# Source:"
	// comment), or "document N".
	Source string
	// GVK is its apiVersion and kind.
	GVK schema.GroupVersionKind
	// Name is its metadata.name.
	Name string
	// Typed is the decoded object: a k8s.io/api type, or *ServiceMonitor.
	Typed runtime.Object
}

// String names the object in errors: "Deployment/x (templates/d.yaml)".
func (o Object) String() string { return fmt.Sprintf("%s/%s (%s)", o.GVK.Kind, o.Name, o.Source) }

// Validator checks manifests. Build one with New and reuse it: building
// parses the embedded schema, which takes a moment.
type Validator struct {
	decoder   runtime.Decoder
	converter managedfields.TypeConverter
}

// New builds a Validator for the kinds of the client-go scheme and
// ServiceMonitor.
func New() *Validator {
	return &Validator{
		decoder:   serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer(),
		converter: applyconfigurations.NewTypeConverter(scheme.Scheme),
	}
}

// Validate checks every document of manifest (YAML documents separated by
// "---") and then the references between them. It returns the objects and
// every problem found, joined, each naming the object and the field.
func (v *Validator) Validate(manifest string) ([]Object, error) {
	docs, err := split(manifest)
	if err != nil {
		return nil, err
	}
	var objs []Object
	var errs []error
	for _, d := range docs {
		o, err := v.decode(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.source, err))
			continue
		}
		objs = append(objs, o)
		for _, e := range checkObject(o) {
			errs = append(errs, fmt.Errorf("%s: %w", o, e))
		}
	}
	errs = append(errs, checkReferences(objs)...)
	return objs, errors.Join(errs...)
}

type document struct {
	source string
	json   []byte
}

// split cuts a manifest into its non-empty documents, in JSON, refusing
// duplicate keys.
func split(manifest string) ([]document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var docs []document
	for n := 1; ; n++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		source := fmt.Sprintf("document %d", n)
		for line := range strings.SplitSeq(string(raw), "\n") {
			if s, ok := strings.CutPrefix(line, "# Source: "); ok {
				source = strings.TrimSpace(s)
			}
		}
		js, err := yaml.YAMLToJSONStrict(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		docs = append(docs, document{source: source, json: js})
	}
}

// decode decodes one document strictly into its type and checks it
// against the schema.
func (v *Validator) decode(d document) (Object, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(d.json); err != nil {
		return Object{}, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	o := Object{Source: d.source, GVK: u.GroupVersionKind(), Name: u.GetName()}
	if o.GVK == ServiceMonitorGVK {
		sm, err := decodeServiceMonitor(d.json)
		if err != nil {
			return o, fmt.Errorf("%s/%s: %w", o.GVK.Kind, o.Name, err)
		}
		o.Typed = sm
		return o, nil
	}
	if !scheme.Scheme.Recognizes(o.GVK) {
		return o, fmt.Errorf("%s %s: not a kind this validator knows (client-go scheme or ServiceMonitor)", o.GVK.GroupVersion(), o.GVK.Kind)
	}
	typed, _, err := v.decoder.Decode(d.json, nil, nil)
	if err != nil {
		return o, fmt.Errorf("%s/%s: %w", o.GVK.Kind, o.Name, err)
	}
	if _, err := v.converter.ObjectToTyped(&u); err != nil {
		return o, fmt.Errorf("%s/%s: schema: %w", o.GVK.Kind, o.Name, err)
	}
	o.Typed = typed
	return o, nil
}
