package adminapi

import "strings"

// unsolicited says why a message on an API subject is not a request to act
// on ("": it is one). A request always has a reply subject, an inbox of
// its requester's (or "_R_." across a service import). A message without
// one cannot be answered, and one whose reply is a JetStream subject
// ("$JS.ACK.…") was delivered by a push consumer whose deliver subject is
// this endpoint: a user who may create a consumer on any stream of the
// account can have the server deliver that stream's messages here, which
// subject permissions cannot forbid (nats-server checks neither push
// against pull nor the creator's rights on a deliver subject). Acting on
// either would obey what no requester asked.
func unsolicited(reply string) string {
	switch {
	case reply == "":
		return "no reply subject: a request has one"
	case strings.HasPrefix(reply, "$JS."):
		return "a JetStream delivery (a push consumer's deliver subject is this endpoint), not a request"
	}
	return ""
}
