package admin

import (
	"github.com/jetsched/jetsched/internal/account"
)

// AccountRequest asks for the account of one schedule (schedule.account):
// every occurrence it owed whose nominal time is after From and not after
// To, with its fate and the evidence (docs/operations.md, "Every slot
// accounted for"). From and To are RFC 3339 times; To defaults to now,
// From to To less the ledger's retention (the sched_ticks TTL). The
// entries come in nominal order, a page of Limit (default DefaultLimit,
// at most MaxLimit) after Cursor, a previous page's next_cursor. Fates,
// when set, lists only the entries of those fates (account.FateFired,
// ...); the summary counts them all either way.
type AccountRequest struct {
	ID     string   `json:"id"`
	From   string   `json:"from,omitempty"`
	To     string   `json:"to,omitempty"`
	Cursor string   `json:"cursor,omitempty"`
	Limit  int      `json:"limit,omitempty"`
	Fates  []string `json:"fates,omitempty"`
}

// AccountPage is the reply of schedule.account: the summary of the whole
// range (on every page), a page of its entries, the count of the entries
// the request's fates select (on every page), and the cursor of the next
// page ("" on the last). Invalid is set, and the summary empty, for a
// schedule whose spec does not decode or compile: it owes no slot (it is
// reported invalid instead).
type AccountPage struct {
	Summary    account.Summary `json:"summary"`
	Items      []account.Entry `json:"items"`
	Total      int             `json:"total"`
	NextCursor string          `json:"next_cursor,omitempty"`
	Invalid    string          `json:"invalid,omitempty"`
}
