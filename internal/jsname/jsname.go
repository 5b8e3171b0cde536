// Package jsname derives the subjects jetsched must publish on itself,
// where nats.go has no call that does it for us (a pipelined KV write, a
// KV update that sets a per-message TTL, a batched direct get), from the
// JetStream context: so that they follow its domain or API prefix exactly
// as nats.go's own calls do, and work across leaf nodes and accounts; and
// it binds a context to a domain (InDomain) for pkg/client's WithDomain and
// pkg/worker's Config.Domain.
package jsname

import (
	"fmt"
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
func KV(js jetstream.JetStream, bucket, key string) string { return KVPrefix(js, bucket) + key }

// KVPrefix is what KV puts before a key: "$KV.<bucket>.", behind the API
// prefix when the context has one. Bulk writers derive it once and append
// each key.
func KVPrefix(js jetstream.JetStream, bucket string) string {
	s := "$KV." + bucket + "."
	if p := apiPrefix(js); p != jetstream.DefaultAPIPrefix {
		return p + s
	}
	return s
}

// API is the subject of a JetStream API request, e.g. API(js,
// "DIRECT.GET.KV_sched_ticks") is "$JS.API.DIRECT.GET.KV_sched_ticks"
// (or "$JS.hub.API.…" in the domain hub).
func API(js jetstream.JetStream, request string) string { return apiPrefix(js) + request }

// InDomain returns js bound to the JetStream domain domain: js itself
// when it is bound to it already (or domain is ""), else a context made
// with jetstream.NewWithDomain on js's connection, with js's default
// timeout. A js bound to another domain, or made with an API prefix, is
// an error: the caller named two places.
func InDomain(js jetstream.JetStream, domain string) (jetstream.JetStream, error) {
	cur := js.Options()
	switch {
	case domain == "" || cur.Domain == domain:
		return js, nil
	case cur.Domain != "":
		return nil, fmt.Errorf("the JetStream passed in is bound to domain %q", cur.Domain)
	case cur.APIPrefix != "":
		return nil, fmt.Errorf("the JetStream passed in has the API prefix %q; give one or the other", cur.APIPrefix)
	}
	bound, err := jetstream.NewWithDomain(js.Conn(), domain, jetstream.WithDefaultTimeout(cur.DefaultTimeout))
	if err != nil {
		return nil, fmt.Errorf("bind to JetStream domain %q: %w", domain, err)
	}
	return bound, nil
}
