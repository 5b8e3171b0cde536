package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// deadLettersUnderLeastPrivilege: a dead letter the billing worker keeps
// (its own workflow's subject, as pkg/worker does) is listed, retried and
// purged by the operator through the admin API alone, the scheduler's
// account doing the reads, the publish and the delete; both actions are in
// the audit trail under the operator's name. Neither the worker nor the
// operator may delete an event message directly.
func deadLettersUnderLeastPrivilege(t *testing.T, op, billing, sched *actor) {
	t.Helper()
	ctx := context.Background()
	dl := nats.NewMsg("sched.event.dead_letter.invoices.inv")
	dl.Header.Set(kvstore.HeaderScheduleID, "inv")
	dl.Header.Set(kvstore.HeaderWorkflow, "invoices")
	dl.Header.Set(kvstore.HeaderScheduledAt, time.Now().UTC().Format(time.RFC3339Nano))
	dl.Header.Set("Sched-Original-Subject", "sched.fire.invoices.inv")
	dl.Header.Set("Sched-Original-Id", "inv.1796112000000")
	dl.Header.Set("Sched-Deliveries", "5")
	dl.Header.Set("Sched-Error", "card declined")
	if err := billing.nc.PublishMsg(dl); err != nil {
		t.Fatal(err)
	}
	if err := billing.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	call := func(verb string, req, resp any) {
		t.Helper()
		data, _ := json.Marshal(req)
		msg, err := op.nc.Request("sched.api."+verb, data, 10*time.Second)
		if err != nil || msg.Header.Get("Nats-Service-Error-Code") != "" {
			t.Fatalf("operator %s through the API: %v %s", verb, err, msg.Data)
		}
		if err := json.Unmarshal(msg.Data, resp); err != nil {
			t.Fatal(err)
		}
	}
	var seq uint64
	testwait.Eventually(t, 10*time.Second, "the dead letter listed", func() bool {
		var pg admin.Page[admin.DeadLetter]
		call("deadletter.list", admin.DeadLetterListRequest{Workflow: "invoices"}, &pg)
		if len(pg.Items) == 1 && pg.Items[0].Reason == "card declined" {
			seq = pg.Items[0].Seq
		}
		return seq != 0
	})
	var retried admin.DeadLetterRetryReply
	call("deadletter.retry", admin.DeadLetterActionRequest{Seq: seq}, &retried)
	if len(retried.Retried) != 1 || retried.Retried[0].Subject != "sched.fire.invoices.inv.retry" || retried.Retried[0].Duplicate {
		t.Fatalf("retry: %+v", retried)
	}
	var purged admin.DeadLetterPurgeReply
	call("deadletter.purge", admin.DeadLetterActionRequest{Seq: seq}, &purged)
	if len(purged.Purged) != 1 || purged.Purged[0] != seq {
		t.Fatalf("purge: %+v", purged)
	}
	del := []byte(fmt.Sprintf(`{"seq":%d}`, seq))
	billing.refusePublish(t, "worker deletes a dead letter", "$JS.API.STREAM.MSG.DELETE.SCHED_EVENTS", del)
	op.refusePublish(t, "operator deletes an event message directly", "$JS.API.STREAM.MSG.DELETE.SCHED_EVENTS", del)

	sjs, _ := jetstream.New(sched.nc)
	trail, err := sjs.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "the retry and the purge in the audit trail", func() bool {
		info, err := trail.Info(ctx)
		if err != nil {
			return false
		}
		seen := map[string]bool{}
		for s := info.State.FirstSeq; s <= info.State.LastSeq; s++ {
			if e, err := audit.ReadEntry(ctx, trail, s); err == nil && e.Target == fmt.Sprint(seq) && e.Actor == "operator" && e.Phase == audit.PhaseIntent {
				seen[e.Action] = true
			}
		}
		return seen["deadletter.retry"] && seen["deadletter.purge"]
	})
}
