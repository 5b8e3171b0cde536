package adminapi

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Bounds of schedule.import.
const (
	// maxImportMessage bounds an item's error message in the reply.
	maxImportMessage = 256
	// maxImportResultBytes bounds one item's result in the reply: an id of
	// kvstore.MaxIDLen, a message of maxImportMessage, a field name, the
	// JSON around them.
	maxImportResultBytes = kvstore.MaxIDLen + maxImportMessage + 128
)

func (h handlers) scheduleImport(ctx context.Context, body []byte) (any, error) {
	r, err := decode[admin.ImportRequest](body)
	if err != nil {
		return nil, err
	}
	if limit := h.replyBudget / maxImportResultBytes; len(r.Items) > min(admin.MaxImportItems, limit) {
		return nil, &kvstore.FieldError{Field: "items", Reason: fmt.Sprintf("%d items: at most %d in one request (the reply must fit the max payload)", len(r.Items), min(admin.MaxImportItems, limit))}
	}
	resp := admin.ImportResponse{Results: make([]admin.ImportResult, len(r.Items))}
	writes := make([]jsstore.SpecWrite, len(r.Items))
	refused := false // an item that does not decode: nothing to ask the store
	for i, it := range r.Items {
		id, spec, err := decodeSpec(it.ID, it.Spec)
		writes[i] = jsstore.SpecWrite{ID: id, Spec: spec}
		resp.Results[i].ID = id
		if err != nil {
			resp.Results[i].Error = itemError(err)
			refused = true
		}
	}
	if !refused {
		for i, res := range h.store.SaveSpecs(ctx, writes, jsstore.SaveOptions{Now: time.Now()}, r.Check) {
			resp.Results[i] = result(writes[i].ID, res)
		}
	} else {
		for i := range resp.Results {
			if resp.Results[i].Error == nil {
				resp.Results[i].Error = itemError(fmt.Errorf("%w: schedule %q: another item of the batch was refused", jsstore.ErrNotWritten, writes[i].ID))
			}
		}
	}
	for _, res := range resp.Results {
		switch {
		case res.Error != nil:
			resp.Failed++
		case res.Unchanged:
			resp.Unchanged++
		default:
			resp.Saved++
		}
	}
	return resp, nil
}

// result is an item's result from what the store did.
func result(id string, res jsstore.SpecResult) admin.ImportResult {
	out := admin.ImportResult{ID: id, Revision: res.Revision, Created: res.Created, Unchanged: res.Unchanged}
	if res.Err != nil {
		out.Error = itemError(res.Err)
	}
	return out
}

// itemError is an item's error for the reply, its message bounded.
func itemError(err error) *admin.Error {
	e := toError(err)
	if len(e.Message) > maxImportMessage {
		cut := maxImportMessage - len("…")
		for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
			cut--
		}
		e.Message = e.Message[:cut] + "…"
	}
	if len(e.Field) > 64 {
		e.Field = e.Field[:64]
	}
	return &e
}
