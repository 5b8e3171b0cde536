package natsperm

import (
	"strings"

	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Accounts of natsconf/accounts.conf.
const (
	// SchedulerAccount holds jetsched's streams and buckets, the
	// scheduler and the workers.
	SchedulerAccount = "JETSCHED"
	// OperatorAccount holds the operators: everything they reach is a
	// service imported from SchedulerAccount.
	OperatorAccount = "OPS"
	// APIPrefix is the JetStream API prefix under which OperatorAccount
	// imports the stream reads of `scheduler audit verify` (an account
	// without JetStream answers $JS.API itself, so the imports need a
	// prefix of their own; the CLI falls back to this one).
	APIPrefix = "JS.jetsched.API"
)

// Service is a service the scheduler's account exports and the
// operators' account imports.
type Service struct {
	// Subject is the service's subject in the scheduler's account; To is
	// the subject the operators use ("" when the same).
	Subject, To string
	// Share makes the import share the requester's user with the service:
	// nats-server then puts it in the request's Nats-Request-Info header
	// (replacing any the caller sent), and the admin API records it as
	// the actor.
	Share bool
	// Stream lets many responders answer one request (service discovery).
	Stream bool
	// Feed makes it a stream export rather than a service: what is
	// published on Subject in the scheduler's account reaches the
	// operators' subscribers (the watched buckets' writes, for --watch).
	Feed bool
}

// Import is the subject the operators use.
func (s Service) Import() string {
	if s.To != "" {
		return s.To
	}
	return s.Subject
}

// OperatorServices are the services operators import: the admin API with
// the requester shared, service discovery, and read-only access (stream
// info and reading a message by sequence) to the audit trail, its head
// bucket and the fire and wakeup streams, for `scheduler audit verify`;
// and, as feeds, the writes of the specs, state and wakeups buckets, which
// `--watch` follows (a subscription, not a consumer: no right to create a
// consumer, whose deliver subject no permission can constrain).
func OperatorServices(l kvstore.Layout) []Service {
	l = l.WithDefaults()
	out := []Service{
		{Subject: l.Prefix + ".api.>", Share: true},
		{Subject: "$SRV.>", Stream: true},
	}
	for _, s := range []string{audit.Stream, "KV_" + audit.HeadBucket, l.FiresStream, l.WakeupsStream} {
		for _, api := range []string{"STREAM.INFO.", "STREAM.MSG.GET."} {
			out = append(out, Service{Subject: "$JS.API." + api + s, To: APIPrefix + "." + api + s})
		}
	}
	for _, b := range WatchedBuckets(l) {
		out = append(out, Service{Subject: "$KV." + b + ".>", Feed: true})
	}
	return out
}

// WatchedBuckets are the buckets whose writes operators may follow
// (`schedule ls`, `status` and `wakeup ls` with --watch): specs, state and
// wakeups.
func WatchedBuckets(l kvstore.Layout) []string {
	l = l.WithDefaults()
	return []string{l.SpecsBucket, l.StateBucket, l.WakeupsBucket}
}

// RenderExports writes the `exports: [...]` of the scheduler's account,
// each line starting with indent.
func RenderExports(svcs []Service, indent string) string {
	var b strings.Builder
	for _, c := range wrap("Services the operators' account (" + OperatorAccount + ") imports: the admin API, " +
		"discovery, the stream reads of `scheduler audit verify`, and the writes of the buckets that " +
		"`--watch` follows (streams, not services).") {
		b.WriteString(indent + "# " + c + "\n")
	}
	b.WriteString(indent + "exports: [\n")
	for _, s := range svcs {
		if s.Feed {
			b.WriteString(indent + "  {stream: " + quote(s.Subject) + "}\n")
			continue
		}
		line := "{service: " + quote(s.Subject)
		if s.Stream {
			line += ", response_type: stream"
		}
		b.WriteString(indent + "  " + line + "}\n")
	}
	b.WriteString(indent + "]\n")
	return b.String()
}

// RenderImports writes the `imports: [...]` of the operators' account,
// importing svcs from account from, each line starting with indent.
func RenderImports(svcs []Service, from, indent string) string {
	var b strings.Builder
	for _, c := range wrap("The admin API is imported with share: true, so that nats-server tells the " +
		"scheduler which user sent each request (the audit trail's actor); the stream reads are imported " +
		"under the JetStream API prefix " + APIPrefix + ", the buckets' writes as they are.") {
		b.WriteString(indent + "# " + c + "\n")
	}
	b.WriteString(indent + "imports: [\n")
	for _, s := range svcs {
		if s.Feed {
			b.WriteString(indent + "  {stream: {account: " + from + ", subject: " + quote(s.Subject) + "}}\n")
			continue
		}
		line := "{service: {account: " + from + ", subject: " + quote(s.Subject) + "}"
		if s.To != "" {
			line += ", to: " + quote(s.To)
		}
		if s.Share {
			line += ", share: true"
		}
		b.WriteString(indent + "  " + line + "}\n")
	}
	b.WriteString(indent + "]\n")
	return b.String()
}
