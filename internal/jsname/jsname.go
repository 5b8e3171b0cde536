// Package jsname derives the subjects jetsched must publish on itself,
// where nats.go has no call that does it for us (a pipelined KV write, a
// KV update that sets a per-message TTL, a batched direct get), from the
// JetStream context: so that they follow its domain or API prefix exactly
// as nats.go's own calls do, and work across leaf nodes and accounts.
package jsname

import (
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// apiPrefix is the context's JetStream API prefix, as nats.go computes it:
// "$JS.<domain>.API." with a domain, the configured prefix (with a
// trailing dot) otherwise, "$JS.API." by default.
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		if strings.HasSuffix(o.APIPrefix, ".") {
			return o.APIPrefix
		}
		return o.APIPrefix + "."
	}
	return jetstream.DefaultAPIPrefix
}

// KV is the subject a write to key of bucket is published on, as
// jetstream.KeyValue.Put publishes it: "$KV.<bucket>.<key>", behind the
// API prefix when the context has a domain or a prefix of its own.
func KV(js jetstream.JetStream, bucket, key string) string {
	s := "$KV." + bucket + "." + key
	if p := apiPrefix(js); p != jetstream.DefaultAPIPrefix {
		return p + s
	}
	return s
}

// API is the subject of a JetStream API request, e.g. API(js,
// "DIRECT.GET.KV_sched_ticks") is "$JS.API.DIRECT.GET.KV_sched_ticks"
// (or "$JS.hub.API.…" in the domain hub).
func API(js jetstream.JetStream, request string) string { return apiPrefix(js) + request }
