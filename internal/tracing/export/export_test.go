package export_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/internal/tracing/export"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSetupOTLPHTTP: OTEL_EXPORTER_OTLP_ENDPOINT pointing at an HTTP
// server makes Setup export there over http/protobuf: the server receives
// a span posted to /v1/traces with the service name OTEL_SERVICE_NAME
// gives, once the provider is shut down (flushed).
func TestSetupOTLPHTTP(t *testing.T) {
	t.Parallel()
	got := make(chan *coltrace.ExportTraceServiceRequest, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" && proto.Unmarshal(body, &req) == nil {
			got <- &req
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	ctx := context.Background()
	p, err := export.Setup(ctx, export.Options{ServiceName: "jetsched-scheduler", Getenv: envOf(map[string]string{
		export.EnvEndpoint:           srv.URL,
		export.EnvServiceName:        "sched-test",
		export.EnvResourceAttributes: "deployment.environment=test,service.name=overridden,team=a%20b",
	})})
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.Enabled(p.TracerProvider) || p.Exporter != "otlp "+srv.URL+"/v1/traces" {
		t.Fatalf("provider %T exporter %q, want otlp to the test server", p.TracerProvider, p.Exporter)
	}
	_, span := tracing.Tracer(p.TracerProvider).Start(ctx, "dispatch report")
	span.End()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	req := testwait.Receive(t, 20*time.Second, "an OTLP export request", got)
	rs := req.GetResourceSpans()
	if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || len(rs[0].GetScopeSpans()[0].GetSpans()) != 1 {
		t.Fatalf("export request %v, want one span", req)
	}
	if name := rs[0].GetScopeSpans()[0].GetSpans()[0].GetName(); name != "dispatch report" {
		t.Fatalf("span %q, want dispatch report", name)
	}
	res := map[string]string{}
	for _, kv := range rs[0].GetResource().GetAttributes() {
		res[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	if res["service.name"] != "sched-test" || res["deployment.environment"] != "test" || res["team"] != "a b" {
		t.Fatalf("resource %v, want OTEL_SERVICE_NAME's sched-test and OTEL_RESOURCE_ATTRIBUTES'", res)
	}
}

// TestSetupOff: with no OTEL_* variable, or with tracing switched off,
// the provider is otel's noop (nothing is exported, the engine skips its
// spans); the console exporter writes spans as JSON.
func TestSetupOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, env := range map[string]map[string]string{
		"nothing set":   nil,
		"sdk disabled":  {export.EnvSDKDisabled: "true", export.EnvEndpoint: "http://127.0.0.1:1"},
		"exporter none": {export.EnvExporter: "none", export.EnvEndpoint: "http://127.0.0.1:1"},
	} {
		p, err := export.Setup(ctx, export.Options{Getenv: envOf(env), ServiceName: "s"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tracing.Enabled(p.TracerProvider) || !strings.HasPrefix(p.Exporter, "off") {
			t.Fatalf("%s: provider %T exporter %q, want off", name, p.TracerProvider, p.Exporter)
		}
		if err := p.Shutdown(ctx); err != nil {
			t.Fatalf("%s: shutdown: %v", name, err)
		}
	}
	var buf bytes.Buffer
	p, err := export.Setup(ctx, export.Options{Getenv: envOf(map[string]string{export.EnvExporter: "console"}), ServiceName: "s", Console: &buf})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tracing.Tracer(p.TracerProvider).Start(ctx, "handle report")
	span.End()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"Name":"handle report"`) {
		t.Fatalf("console output %q, want the span", buf.String())
	}
}

// TestSetupRefusesBadValues: a bad OTEL_* value is an error naming the
// variable.
func TestSetupRefusesBadValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ key, value, extra string }{
		{export.EnvSDKDisabled, "yes", ""},
		{export.EnvExporter, "zipkin", ""},
		{export.EnvProtocol, "grpc", export.EnvEndpoint},
		{export.EnvTracesProtocol, "http/json", export.EnvEndpoint},
		{export.EnvEndpoint, "collector:4318", ""},
		{export.EnvTracesEndpoint, "collector:4318/v1/traces", ""},
		{export.EnvSampler, "sometimes", export.EnvEndpoint},
		{export.EnvResourceAttributes, "team", export.EnvEndpoint},
	} {
		env := map[string]string{c.key: c.value}
		if c.extra != "" {
			env[c.extra] = "http://127.0.0.1:1"
		}
		_, err := export.Setup(context.Background(), export.Options{Getenv: envOf(env), ServiceName: "s"})
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s=%s: error %v, want one naming %s", c.key, c.value, err, c.key)
		}
	}
}
