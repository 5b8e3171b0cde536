package adminapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/natstest"
)

// apiSeeds are the documented requests of every verb (docs/api.md), the
// fuzz corpus's seeds.
var apiSeeds = map[string][]string{
	"schedule.create": {`{"id":"x","spec":{"workflow":"wf","every":"10s"}}`, `{"id":"x","spec":{"workflow":"wf","cron":"0 9 * * 1-5","tz":"Europe/Paris","input":{"a":1}},"upsert":true}`},
	"schedule.update": {`{"id":"x","spec":{"workflow":"wf","every":"20s"},"if_revision":1}`},
	"schedule.import": {
		`{"items":[{"id":"x","spec":{"workflow":"wf","every":"10s"}},{"spec":{"workflow":"wf","cron":"0 9 * * *","tz":"Europe/Paris"}}]}`,
		`{"items":[{"id":"x","spec":{"workflow":"wf","every":"10s"}},{"id":"x","spec":{"workflow":"wf","every":"20s"}}],"check":true}`,
		`{"items":[{"id":"y","spec":{"workflow":"wf","cron":"0 0 30 2 *"}},{"id":"z","spec":null}]}`,
		`{"items":[]}`, `{"items":[{}]}`, `{"items":null,"check":false}`,
	},
	"schedule.get":             {`{"id":"x"}`},
	"schedule.list":            {`{}`, `{"cursor":"a","limit":10,"workflow":"wf","state":"paused","prefix":"x"}`, `{"selector":"team=billing,tier!=gold,env in (a,b),!legacy"}`},
	"schedule.delete":          {`{"id":"x","if_revision":3}`},
	"schedule.pause":           {`{"id":"x","note":"audit","until":"2099-01-01T00:00:00Z"}`, `{"id":"x","for":"2 hours"}`},
	"schedule.resume":          {`{"id":"x"}`},
	"schedule.trigger":         {`{"id":"x","note":"by hand"}`},
	"schedule.skip":            {`{"id":"x","count":2}`},
	"schedule.backfill":        {`{"id":"x","from":"2026-01-01T00:00:00Z","to":"2026-01-01T00:10:00Z","rate":50,"note":"replay"}`},
	"schedule.backfill.cancel": {`{"id":"x"}`},
	"schedule.history":         {`{"id":"x","limit":5,"order":"oldest","cursor":"x.1767225600000"}`},
	"schedule.account":         {`{"id":"x","from":"2026-01-01T00:00:00Z","to":"2026-01-02T00:00:00Z","limit":5,"cursor":"2026-01-01T00:10:00Z","fates":["unaccounted"]}`},
	"status":                   {`{"limit":1}`},
	"calendar.put":             {`{"name":"fr","calendar":{"zone":"Europe/Paris","holidays":[{"name":"New Year","date":"01-01"}]}}`},
	"calendar.get":             {`{"name":"fr"}`},
	"calendar.list":            {`{"limit":2}`},
	"calendar.delete":          {`{"name":"fr","force":true}`},
	"calendar.count": {`{"name":"fr","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z"}`,
		`{"calendar":{"zone":"UTC","weekend":["sat","sun"]},"from":"now","to":"now-30d"}`},
	"wakeup.add":    {`{"run":"order.1","step":"esc","workflow":"approvals","when":"1h","payload":{"o":1},"condition":"waiting","expire_after":"1h"}`},
	"wakeup.cancel": {`{"run":"order.1","step":"esc"}`, `{"run":"order.1"}`, `{"step":"0"}`},
	"wakeup.list":   {`{"run":"order.1","workflow":"approvals","limit":3}`, `{"selector":"team"}`},
	"wakeup.get":    {`{"run":"order.1","step":"esc"}`, `{"run":"order.1"}`},
}

// FuzzAPI sends random bodies to every verb's handler against a real
// server and store: no handler may panic, and every failure must be a
// coded error about the request (invalid, not_found, conflict, in_use),
// never "internal"; every reply must encode within the reply budget.
func FuzzAPI(f *testing.F) {
	srv := natstest.Start(f)
	js, store := srv.Store(f)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := newCatalog(store, log)
	cat.start(context.Background())
	f.Cleanup(cat.Stop)
	h := newHandlers(store, cat, js.Conn(), 100)
	table := h.table()
	verbs := slices.Sorted(func(yield func(string) bool) {
		for v := range table {
			if !yield(v) {
				return
			}
		}
	})
	for i, v := range verbs {
		for _, body := range apiSeeds[v] {
			f.Add(uint8(i), []byte(body))
		}
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, verb uint8, body []byte) {
		name := verbs[int(verb)%len(verbs)]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := table[name](ctx, body)
		if err != nil {
			if e := toError(err); e.Code == admin.CodeInternal || e.Code == "" || e.Message == "" {
				t.Fatalf("%s %q: %q %q: %v", name, body, e.Code, e.Message, err)
			}
			return
		}
		data, ok := out.(rawJSON)
		if !ok {
			data, err = json.Marshal(out)
		}
		if err != nil || !json.Valid(data) || len(data) > maxReplyBytes+summaryBudget {
			t.Fatalf("%s %q: reply of %d bytes (%v)", name, body, len(data), err)
		}
	})
}
