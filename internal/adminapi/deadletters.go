package adminapi

import (
	"context"
	"strconv"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/deadletters"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// deadLetterList answers deadletter.list: a page of dead letters, newest
// first.
func (h handlers) deadLetterList(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.DeadLetterListRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Workflow != "" {
		if err := kvstore.ValidateWorkflow(r.Workflow); err != nil {
			return nil, err
		}
	}
	limit, err := limitOf(r.Limit)
	if err != nil {
		return nil, err
	}
	var before uint64
	if r.Cursor != "" {
		if before, err = strconv.ParseUint(r.Cursor, 10, 64); err != nil || before == 0 {
			return nil, &kvstore.FieldError{Field: "cursor", Value: r.Cursor, Reason: "not a cursor of deadletter.list (a previous page's next_cursor)"}
		}
	}
	return h.letters().List(ctx, r.Workflow, before, limit)
}

// deadLetterGet answers deadletter.get.
func (h handlers) deadLetterGet(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.DeadLetterRequest](body)
	if err != nil {
		return nil, err
	}
	return h.letters().Get(ctx, r.Seq)
}

// deadLetterRetry answers deadletter.retry.
func (h handlers) deadLetterRetry(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.DeadLetterActionRequest](body)
	if err != nil {
		return nil, err
	}
	return h.letters().Retry(ctx, r)
}

// deadLetterPurge answers deadletter.purge.
func (h handlers) deadLetterPurge(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.DeadLetterActionRequest](body)
	if err != nil {
		return nil, err
	}
	return h.letters().Purge(ctx, r)
}

func (h handlers) letters() deadletters.Letters { return deadletters.Letters{Store: h.store} }
