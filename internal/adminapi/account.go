package adminapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// accountQuery is a checked AccountRequest.
type accountQuery struct {
	from, to, cursor time.Time
	limit            int
	fates            []string
}

// checkAccount checks an AccountRequest's fields, times resolved against
// now and the tick retention.
func checkAccount(r admin.AccountRequest, now time.Time, retention time.Duration) (accountQuery, error) {
	q := accountQuery{to: now}
	var err error
	if q.limit, err = limitOf(r.Limit); err != nil {
		return q, err
	}
	if r.To != "" {
		if q.to, err = requestTime("to", r.To); err != nil {
			return q, err
		}
	}
	switch {
	case r.From != "":
		if q.from, err = requestTime("from", r.From); err != nil {
			return q, err
		}
	case retention > 0:
		q.from = q.to.Add(-retention)
	}
	if q.to.Before(q.from) {
		return q, &kvstore.FieldError{Field: "to", Value: r.To, Reason: "before from " + q.from.UTC().Format(time.RFC3339Nano)}
	}
	if r.Cursor != "" {
		if q.cursor, err = time.Parse(time.RFC3339Nano, r.Cursor); err != nil {
			return q, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor from a previous page of this account (an entry's nominal time)"}
		}
	}
	for _, f := range r.Fates {
		if !slices.Contains(account.Fates(), f) {
			return q, &kvstore.FieldError{Field: "fates", Value: f, Reason: "want one of " + strings.Join(account.Fates(), ", ")}
		}
	}
	q.fates = r.Fates
	return q, nil
}

// requestTime parses an RFC 3339 time of a request's field.
func requestTime(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, &kvstore.FieldError{Field: field, Value: v, Reason: "want an RFC 3339 time such as 2026-12-01T09:00:00Z"}
	}
	return t, nil
}

func (h handlers) scheduleAccount(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.AccountRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	retention, err := h.store.TickRetention(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	q, err := checkAccount(r, now, retention)
	if err != nil {
		return nil, err
	}
	in, invalid, err := h.accountInput(ctx, r.ID, now, retention)
	if err != nil {
		return nil, err
	}
	if invalid != "" {
		return admin.AccountPage{Summary: account.Summary{From: q.from, To: q.to}, Items: []account.Entry{}, Invalid: invalid}, nil
	}
	in.From, in.To = q.from, q.to
	var items []keyed[account.Entry]
	total, more := 0, false
	sum := account.Account(in, func(e account.Entry) {
		if len(q.fates) > 0 && !slices.Contains(q.fates, e.Fate) {
			return
		}
		total++
		if more || !q.cursor.IsZero() && !e.Nominal.After(q.cursor) {
			return
		}
		if len(items) == q.limit {
			more = true
			return
		}
		e.Reason, _ = clip(e.Reason)
		items = append(items, keyed[account.Entry]{key: e.Nominal.UTC().Format(time.RFC3339Nano), v: e})
	})
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.key
	}
	return cutPage(items, page{keys: keys, total: total, more: more}, h.replyBudget-summaryBudget, func(e account.Entry) account.Entry {
		return account.Entry{Nominal: e.Nominal, Slot: e.Slot, Fate: e.Fate, Status: e.Status, Seq: e.Seq}
	}, "summary", sum)
}

// accountInput gathers what an account of schedule id looks at: its spec
// compiled, its state as schedulers see it (schedule.get's), and its
// ledger. invalid is set instead for a spec that does not decode, validate
// or compile; an unknown id is kvstore.ErrNotFound.
func (h handlers) accountInput(ctx context.Context, id string, now time.Time, retention time.Duration) (in account.Input, invalid string, err error) {
	e, err := h.store.GetSpec(ctx, id)
	if err != nil && e.ID == "" {
		return in, "", err
	}
	v := h.infoOf(ctx, e, err)
	if v.Invalid != "" {
		return in, v.Invalid, nil
	}
	compiled, err := compile.Compile(e.Spec, id, h.store.CalendarSource(ctx), nil)
	if err != nil {
		return in, usererr.Message(err), nil
	}
	in = account.Input{ID: id, Recurrence: account.RecurrenceOf(compiled.Schedule), Owed: e.Written.Add(-time.Nanosecond), Now: now, State: v.State}
	if e.Spec.At != nil {
		in.Owed = e.Spec.At.Add(-time.Nanosecond)
	}
	if retention > 0 {
		in.Retained = now.Add(-retention)
	}
	if in.Ledger, err = h.store.Ledger(ctx, id); err != nil {
		return in, "", fmt.Errorf("admin: account of %q: %w", id, err)
	}
	return in, "", nil
}
