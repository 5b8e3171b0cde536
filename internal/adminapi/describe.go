package adminapi

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scheduleDescribe answers schedule.describe: a schedule's spec with its
// settings, its state, owner, last actions and next fires, in one reply
// (readmodel.Model.Describe).
func (h handlers) scheduleDescribe(ctx context.Context, body []byte) (any, error) {
	r, err := decodeID(body, func(r admin.DescribeRequest) string { return r.ID })
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		field string
		n     int
	}{{"actions", r.Actions}, {"next", r.Next}} {
		if c.n < 0 || c.n > admin.MaxDescribe {
			return nil, &kvstore.FieldError{Field: c.field, Value: strconv.Itoa(c.n), Reason: fmt.Sprintf("must be 0 (the default) to %d", admin.MaxDescribe)}
		}
	}
	e, err := h.store.GetSpec(ctx, r.ID)
	if err != nil && e.ID == "" {
		return nil, err
	}
	return h.model.Describe(ctx, h.listsOf(e.ID), e, err, audit.Trail{}, r), nil
}
