// Package export sets up where jetsched's traces go, from the standard
// OpenTelemetry environment (OTLP over HTTP, or the console): the one
// package that links the SDK and the exporters, so that only the
// programs that export traces (`scheduler run`, the demo worker) carry
// them, and what a user imports from pkg/ does not.
package export

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Environment variables that Setup reads (the OpenTelemetry standard ones;
// the SDK and the OTLP exporter read the rest of OTEL_*, such as
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT and
// OTEL_TRACES_SAMPLER_ARG, themselves).
const (
	EnvSDKDisabled        = "OTEL_SDK_DISABLED"
	EnvExporter           = "OTEL_TRACES_EXPORTER"
	EnvEndpoint           = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint     = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol           = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol     = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvServiceName        = "OTEL_SERVICE_NAME"
	EnvResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"
	EnvSampler            = "OTEL_TRACES_SAMPLER"
)

// Options configures Setup.
type Options struct {
	// Getenv reads the environment. Default: none set (tracing off); the
	// CLI passes os.Getenv.
	Getenv func(string) string
	// ServiceName is service.name unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES set one ("jetsched-scheduler" for
	// scheduler run).
	ServiceName string
	// Console is where OTEL_TRACES_EXPORTER=console writes spans (one
	// JSON object each). Default: io.Discard.
	Console io.Writer
}

// Provider is the TracerProvider Setup made, and how to flush it.
type Provider struct {
	// TracerProvider is what the engine, the admin API and the worker
	// take: otel's noop provider when tracing is off.
	TracerProvider trace.TracerProvider
	// Exporter says where spans go: "otlp <url>", "console", or "off
	// (<why>)", for the start log.
	Exporter string
	shutdown func(context.Context) error
}

// Shutdown flushes the spans not yet exported and stops the provider,
// waiting until done or until ctx ends. Nil-safe; a no-op when off.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil || p.shutdown == nil {
		return nil
	}
	return p.shutdown(ctx)
}

// off is the provider of disabled tracing.
func off(why string) *Provider {
	return &Provider{TracerProvider: noop.NewTracerProvider(), Exporter: "off (" + why + ")"}
}

// Setup makes the TracerProvider that the standard OTEL_* variables ask
// for. Tracing is off unless OTEL_TRACES_EXPORTER names an exporter or an
// OTLP endpoint is set (then the exporter is otlp); OTEL_SDK_DISABLED=true
// or OTEL_TRACES_EXPORTER=none turn it off. The OTLP exporter speaks
// http/protobuf only: grpc would bring google.golang.org/grpc in for one
// exporter (OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused). A bad value is
// an error naming the variable.
func Setup(ctx context.Context, o Options) (*Provider, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	switch v := strings.ToLower(env(EnvSDKDisabled)); v {
	case "true":
		return off(EnvSDKDisabled + "=true"), nil
	case "", "false":
	default:
		return nil, fmt.Errorf("%s=%q: want true or false", EnvSDKDisabled, v)
	}
	endpoint, err := tracesEndpoint(env(EnvTracesEndpoint), env(EnvEndpoint))
	if err != nil {
		return nil, err
	}
	exporter := strings.ToLower(env(EnvExporter))
	if exporter == "" && endpoint != "" {
		exporter = "otlp"
	}
	var exp sdktrace.SpanExporter
	var desc string
	switch exporter {
	case "", "none":
		return off("no " + EnvExporter + " nor OTLP endpoint"), nil
	case "otlp":
		if err := checkProtocol(env); err != nil {
			return nil, err
		}
		var opts []otlptracehttp.Option
		if endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
		} else {
			endpoint = "http://localhost:4318/v1/traces" // the exporter's default
		}
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("OTLP exporter to %s: %w", endpoint, err)
		}
		desc = "otlp " + endpoint
	case "console":
		w := o.Console
		if w == nil {
			w = io.Discard
		}
		if exp, err = stdouttrace.New(stdouttrace.WithWriter(w)); err != nil {
			return nil, fmt.Errorf("console exporter: %w", err)
		}
		desc = "console"
	default:
		return nil, fmt.Errorf("%s=%q: want otlp, console or none (one exporter)", EnvExporter, exporter)
	}
	if err := checkSampler(env(EnvSampler)); err != nil {
		return nil, err
	}
	attrs, err := resourceAttributes(env(EnvResourceAttributes))
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, err
	}
	// service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES', else
	// the default (later attributes win).
	attrs = append([]attribute.KeyValue{attribute.String("service.name", o.ServiceName)}, attrs...)
	if name := env(EnvServiceName); name != "" {
		attrs = append(attrs, attribute.String("service.name", name))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	// The sampler comes from OTEL_TRACES_SAMPLER and _ARG (the SDK reads
	// them; default parentbased_always_on).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: tp, Exporter: desc, shutdown: tp.Shutdown}, nil
}

// resourceAttributes reads OTEL_RESOURCE_ATTRIBUTES: "key=value" pairs
// separated by commas, values percent-encoded.
func resourceAttributes(v string) ([]attribute.KeyValue, error) {
	if v == "" {
		return nil, nil
	}
	var out []attribute.KeyValue
	for _, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: %q is not key=value", EnvResourceAttributes, pair)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%s: the value of %s: %w", EnvResourceAttributes, k, err)
		}
		out = append(out, attribute.String(k, dec))
	}
	return out, nil
}

// tracesEndpoint is the URL spans are posted to: the traces endpoint as
// it is, else the base endpoint with /v1/traces appended (as the OTLP
// specification says); "" when neither is set.
func tracesEndpoint(traces, base string) (string, error) {
	check := func(name, u string) error {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("%s=%q: want an http:// or https:// URL", name, u)
		}
		return nil
	}
	switch {
	case traces != "":
		return traces, check(EnvTracesEndpoint, traces)
	case base != "":
		return strings.TrimSuffix(base, "/") + "/v1/traces", check(EnvEndpoint, base)
	}
	return "", nil
}

// checkProtocol refuses an OTLP protocol other than http/protobuf.
func checkProtocol(env func(string) string) error {
	for _, name := range []string{EnvTracesProtocol, EnvProtocol} {
		switch v := env(name); v {
		case "":
			continue
		case "http/protobuf":
			return nil
		default:
			return fmt.Errorf("%s=%q: jetsched exports OTLP over http/protobuf only (grpc is not built in: point it at the collector's HTTP port, 4318)", name, v)
		}
	}
	return nil
}

// checkSampler refuses a sampler name the SDK does not know (it would
// only log one and sample everything).
func checkSampler(v string) error {
	switch v {
	case "", "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio":
		return nil
	}
	return fmt.Errorf("%s=%q: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", EnvSampler, v)
}
