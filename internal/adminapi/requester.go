package adminapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/jetsched/jetsched/internal/auditlog"
)

// Headers of a request that name its sender.
const (
	// HeaderActor is who the caller says it is (the CLI sends
	// "cli:<user>@<host>"). It is recorded as claimed_actor, never trusted.
	HeaderActor = "Sched-Actor"
	// HeaderRequestInfo is the header nats-server adds to a request that
	// crosses a service import: the requester's account, and its user when
	// the import shares it.
	HeaderRequestInfo = "Nats-Request-Info"
)

// globalAccount is the account of a server without accounts: every client
// is in it, so any of them could write a Nats-Request-Info header.
const globalAccount = "$G"

// ownAccount asks the server which account this connection is in ("" when
// it cannot tell: no system account, or no permission on
// $SYS.REQ.USER.INFO).
func ownAccount(nc *nats.Conn) string {
	msg, err := nc.Request("$SYS.REQ.USER.INFO", nil, 2*time.Second)
	if err != nil {
		return ""
	}
	var resp struct {
		Data struct {
			Account string `json:"account"`
		} `json:"data"`
	}
	if json.Unmarshal(msg.Data, &resp) != nil {
		return ""
	}
	return resp.Data.Account
}

// requesterOf tells who sent req. The server's Nats-Request-Info is
// trusted only when it names another account than the scheduler's own
// (own): the server writes it, replacing any the caller sent, when a
// request crosses a service import from that account. A request from the
// scheduler's own account carries no such header (or one its sender
// wrote), and a server without accounts vouches for no one: those are
// "unauthenticated". The Sched-Actor header is kept as claimed.
func requesterOf(req micro.Request, own string) auditlog.Requester {
	h := req.Headers()
	r := auditlog.Requester{Claimed: h.Get(HeaderActor)}
	raw := h.Get(HeaderRequestInfo)
	if raw == "" || own == "" || own == globalAccount {
		return r
	}
	var info struct {
		Account string `json:"acc"`
		User    string `json:"user"`
	}
	if json.Unmarshal([]byte(raw), &info) != nil || info.Account == "" || info.Account == own {
		return r
	}
	r.User, r.Account = info.User, info.Account
	return r
}

// logActors says once, at start, what the audit trail's actor will be.
func logActors(ctx context.Context, log *slog.Logger, own string) {
	if log == nil {
		return
	}
	switch own {
	case "", globalAccount:
		log.InfoContext(ctx, "admin API: the server vouches for no requester (no accounts, or $SYS.REQ.USER.INFO not allowed): audit entries record actor \"unauthenticated\" and the caller's Sched-Actor as claimed_actor", "account", own)
	default:
		log.InfoContext(ctx, "admin API: requests through a service import are recorded with the user and account the server reports", "account", own)
	}
}
