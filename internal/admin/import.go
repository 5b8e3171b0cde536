package admin

import (
	"encoding/json"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Bounds of schedule.import.
const (
	// MaxImportItems is the most items one schedule.import request may
	// carry (fewer when the connection's max payload is small: see
	// ImportItemsFor).
	MaxImportItems = 1000
	// maxImportMessage bounds an item's error message in the reply.
	maxImportMessage = 256
	// maxImportResultBytes bounds one item's result in the reply: an id of
	// kvstore.MaxIDLen, a message of maxImportMessage, a field name, the
	// JSON around them.
	maxImportResultBytes = kvstore.MaxIDLen + maxImportMessage + 128
)

// ImportItemsFor is the most items a schedule.import request may carry
// over a connection whose max payload is maxPayload (0: unknown), so that
// its reply fits in half of it: MaxImportItems at the default 1 MiB.
func ImportItemsFor(maxPayload int64) int {
	budget := int64(maxReplyBytes)
	if maxPayload > 0 {
		budget = min(budget, maxPayload/2)
	}
	return int(max(1, min(MaxImportItems, budget/maxImportResultBytes)))
}

type (
	// ImportRequest carries a batch of schedules for schedule.import, each
	// created or replaced as schedule.create with upsert does (one audit
	// entry per schedule written), and none written when the stored spec
	// is the same. Every item is decoded and validated before any is
	// written: when one is refused (invalid, static), the batch writes
	// nothing and every other item's result says so (code
	// "not_written"). With Check, nothing is written at all: each result
	// says what an import would do. At most ImportItemsFor(the max
	// payload) items.
	ImportRequest struct {
		Items []ImportItem `json:"items"`
		Check bool         `json:"check,omitempty"`
	}
	// ImportItem is one schedule of an import: its id (none: the spec's,
	// else the content hash, as schedule.create derives it) and spec.
	ImportItem struct {
		ID   string          `json:"id,omitempty"`
		Spec json.RawMessage `json:"spec"`
	}
	// ImportResponse answers schedule.import: one result per item, in
	// the request's order, and the counts of each outcome.
	ImportResponse struct {
		Results   []ImportResult `json:"results"`
		Saved     int            `json:"saved"`
		Unchanged int            `json:"unchanged"`
		Failed    int            `json:"failed"`
	}
	// ImportResult is what was done with one item: saved (Revision the
	// one written, Created when the id was new), unchanged (Revision the
	// stored one), or refused (Error; its message at most 256 bytes).
	// Under Check, a saved item has Revision 0.
	ImportResult struct {
		ID        string `json:"id"`
		Revision  uint64 `json:"revision,omitempty"`
		Created   bool   `json:"created,omitempty"`
		Unchanged bool   `json:"unchanged,omitempty"`
		Error     *Error `json:"error,omitempty"`
	}
)
