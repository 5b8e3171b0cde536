package natsconn

import (
	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/redact"
)

// ConnectedURL is nc's server URL, redacted (redact.URL). nats.go's own
// ConnectedUrlRedacted hides a password but shows a token.
func ConnectedURL(nc *nats.Conn) string { return redact.URL(nc.ConnectedUrl()) }
