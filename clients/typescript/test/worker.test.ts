// The Worker against a real scheduler: fires received and acked, retries
// then a dead letter, permanent failures, cancel requests of
// cancel_other, wakeups, and a stop that hands work back.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";

import { CancelRequestedError, Client, permanent, retry, Worker, type DoneReport, type Fire, type Wakeup } from "../src/index.js";
import { Messages, noServer, open, triggerWhenPlanned, unique, waitFor } from "./helpers.js";

const report = (m: { json<T>(): T }) => m.json<DoneReport>();

/** fireHeaders are a fire message's headers, as a scheduler sets them, of slot "<id>.<n>". */
function fireHeaders(wf: string, id: string, n: number) {
  const h = headers();
  h.set("Nats-Msg-Id", `${id}.${n}`);
  h.set("Sched-Schedule-Id", id);
  h.set("Sched-Workflow", wf);
  h.set("Sched-Scheduled-At", new Date().toISOString());
  return h;
}

/** ledgerEntry is the ledger's entry of a regular slot "<id>.<unix ms>" (schedule.history), if any. */
async function ledgerEntry(client: Client, id: string, slotId: string): Promise<{ status: string; outcome?: string } | undefined> {
  const ms = Number(slotId.slice(id.length + 1));
  const h = await client.call<{ items: { slot: string; status: string; outcome?: string }[] }>("schedule.history", { id });
  return h.items.find((i) => Date.parse(i.slot) === ms);
}

describe("Worker", { skip: noServer }, () => {
  test("receives fires, acks them and reports them completed to the ledger", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-fires");
    const done = new Messages(nc, `sched.done.${wf}.>`);
    const fires: Fire[] = [];
    const w = new Worker(nc, { name: "tsw", maxWorkers: 2 }).handle(wf, (f) => {
      fires.push(f);
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const id = unique("ts-every");
    await client.put({ workflow: wf, every: "1s", input: { hello: "world" } }, { id });
    const first = await done.next("a completed report", 20_000, (m) => report(m).outcome === "completed");
    const r = report(first);
    assert.equal(first.subject, `sched.done.${wf}.${id}`);
    assert.equal(r.worker, "tsw");
    const f = fires.find((x) => x.slotId === r.slot_id)!;
    assert.ok(f, "the reported slot was handled");
    assert.equal(f.scheduleId, id);
    assert.equal(f.workflow, wf);
    assert.equal(f.delivery, 1);
    assert.deepEqual(f.json(), { hello: "world" });
    assert.ok(f.scheduledAt.getTime() > 0 && f.dispatchedAt !== undefined);
    await waitFor("the ledger shows the slot completed by tsw", 15_000, async () => {
      const t = await ledgerEntry(client, id, r.slot_id);
      return t?.status === "completed" && t.outcome === "tsw" ? true : undefined;
    });
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.info("SCHED_FIRES", `tsw-fire-${wf}`);
    assert.equal(info.config.filter_subject, `sched.fire.${wf}.>`);
    assert.equal(info.config.max_deliver, 5);
  });

  test("retries with retry() and the backoff, then dead-letters on the last delivery", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-fail");
    const done = new Messages(nc, `sched.done.${wf}.>`);
    const dead = new Messages(nc, `sched.event.dead_letter.${wf}.>`);
    const deliveries: number[] = [];
    const w = new Worker(nc, { name: "tsw", maxDeliver: 3, backoff: [100] }).handle(wf, (f) => {
      deliveries.push(f.delivery);
      if (f.delivery === 1) throw retry(new Error("not ready"), 100);
      throw new Error(`boom ${f.delivery}`);
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const id = unique("ts-yearly");
    await client.put({ workflow: wf, cron: "0 0 1 1 *", input: { n: 7 } }, { id });
    const slot = await triggerWhenPlanned(client, id);
    const dl = await dead.next("the dead letter", 20_000, () => true);
    assert.equal(dl.subject, `sched.event.dead_letter.${wf}.${id}`);
    assert.equal(dl.headers?.get("Sched-Original-Id"), slot);
    assert.equal(dl.headers?.get("Sched-Original-Subject"), `sched.fire.${wf}.${id}`);
    assert.equal(dl.headers?.get("Sched-Deliveries"), "3");
    assert.equal(dl.headers?.get("Sched-Error"), "boom 3");
    assert.equal(dl.headers?.get("Sched-Schedule-Id"), id);
    assert.equal(dl.headers?.get("Sched-Reason"), "trigger");
    assert.equal(dl.headers?.has("Nats-Msg-Id"), false);
    assert.deepEqual(dl.json(), { n: 7 });
    const r = report(await done.next("the failed report", 10_000, () => true));
    assert.deepEqual(r, { slot_id: slot, outcome: "failed", error: "dead-lettered after 3 deliveries: boom 3", worker: "tsw" });
    assert.deepEqual(deliveries, [1, 2, 3]);
  });

  test("permanent() terminates at once and reports failed", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-perm");
    const done = new Messages(nc, `sched.done.${wf}.>`);
    let calls = 0;
    const w = new Worker(nc, { name: "tsw" }).handle(wf, () => {
      calls++;
      throw permanent(new Error("bad input"));
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const id = unique("ts-yearly");
    await client.put({ workflow: wf, cron: "0 0 1 1 *" }, { id });
    const slot = await triggerWhenPlanned(client, id);
    const r = report(await done.next("the failed report", 20_000, () => true));
    assert.deepEqual(r, { slot_id: slot, outcome: "failed", error: "permanent: bad input", worker: "tsw" });
    const jsm = await jetstreamManager(nc);
    const info = await waitFor("the fire settled", 10_000, async () => {
      const i = await jsm.consumers.info("SCHED_FIRES", `tsw-fire-${wf}`);
      return i.num_ack_pending === 0 ? i : undefined;
    });
    assert.equal(info.num_redelivered, 0);
    assert.equal(calls, 1);
  });

  test("a cancel request of overlap cancel_other aborts the running handler", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-cancel");
    const done = new Messages(nc, `sched.done.${wf}.>`);
    const reasons = new Map<string, unknown>();
    const w = new Worker(nc, { name: "tsw" }).handle(wf, async (f, signal) => {
      if (reasons.size > 0) return; // later slots finish at once
      reasons.set(f.slotId, undefined);
      await new Promise<void>((_resolve, reject) => {
        const safety = setTimeout(() => reject(new Error("never cancelled")), 30_000);
        signal.addEventListener("abort", () => {
          clearTimeout(safety);
          reasons.set(f.slotId, signal.reason);
          reject(signal.reason);
        });
      });
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const id = unique("ts-overlap");
    await client.put({ workflow: wf, every: "2s", overlap: "cancel_other" }, { id });
    const m = await done.next("a cancelled report", 30_000, (x) => report(x).outcome === "cancelled");
    const r = report(m);
    const reason = reasons.get(r.slot_id);
    assert.ok(reason instanceof CancelRequestedError, `the handler's signal aborted with ${String(reason)}`);
    assert.match(reason.by, new RegExp(`^${id}\\.\\d+$`));
    assert.notEqual(reason.by, r.slot_id);
    assert.match(r.error ?? "", /cancel requested by the scheduler/);
    await waitFor("the ledger shows the slot cancelled", 15_000, async () => {
      const t = await ledgerEntry(client, id, r.slot_id);
      return t?.status === "cancelled" ? true : undefined;
    });
  });

  test("receives wakeups, and drops those whose condition no longer holds", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-wake");
    const got: Wakeup[] = [];
    const w = new Worker(nc, { name: "tsw", conditionHolds: (_run, condition) => condition !== "stale" });
    w.handleWakeup(wf, (x) => {
      got.push(x);
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const run = unique("ts-run");
    await client.addTimer({ run, step: "stale", workflow: wf, when: "1s", condition: "stale" });
    await client.addTimer({ run, step: "go", workflow: wf, when: "2s", payload: { order: 42 }, condition: "fresh" });
    const x = await waitFor("the wakeup handled", 20_000, () => got.find((g) => g.step === "go"));
    assert.equal(x.run, run);
    assert.equal(x.workflow, wf);
    assert.deepEqual(x.json(), { order: 42 });
    assert.match(x.id, new RegExp(`^wakeup\\.${run}\\.go\\.\\d+$`));
    const jsm = await jetstreamManager(nc);
    await waitFor("both wakeups acked", 10_000, async () => {
      const i = await jsm.consumers.info("SCHED_WAKEUPS", `tsw-wakeup-${wf}`);
      return i.delivered.consumer_seq === 2 && i.num_ack_pending === 0 ? true : undefined;
    });
    assert.equal(got.filter((g) => g.step === "stale").length, 0);
  });

  test("stop({ cancel: true }) aborts running handlers and hands their fires back", async (t) => {
    const { nc, client } = await open(t);
    const wf = unique("ts-stop");
    const started: Fire[] = [];
    const w1 = new Worker(nc, { name: "tsw" }).handle(wf, (f, signal) => {
      started.push(f);
      return new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    });
    await w1.start();
    const id = unique("ts-yearly");
    await client.put({ workflow: wf, cron: "0 0 1 1 *" }, { id });
    const slot = await triggerWhenPlanned(client, id);
    await waitFor("the fire started", 20_000, () => (started.length > 0 ? true : undefined));
    await w1.stop({ cancel: true });
    const again: Fire[] = [];
    const w2 = new Worker(nc, { name: "tsw" }).handle(wf, (f) => {
      again.push(f);
    });
    await w2.start();
    t.after(() => w2.stop());
    const f = await waitFor("the fire redelivered to the next worker", 20_000, () => again.find((x) => x.slotId === slot));
    assert.equal(f.delivery, 2);
  });

  test("maxWorkersTotal bounds the handlers of every workflow together", async (t) => {
    const { nc } = await open(t);
    const wfs = [unique("ts-total-a"), unique("ts-total-b")];
    let running = 0;
    let most = 0;
    const handled: string[] = [];
    const gates: (() => void)[] = [];
    const handler = async (f: Fire, signal: AbortSignal) => {
      running++;
      most = Math.max(most, running);
      try {
        await new Promise<void>((res, reject) => {
          gates.push(res);
          signal.addEventListener("abort", () => reject(signal.reason));
        });
      } finally {
        running--;
      }
      handled.push(f.slotId);
    };
    // Each workflow may run two, the worker three: not four.
    const w = new Worker(nc, { name: "tsw", maxWorkersTotal: 3 });
    for (const wf of wfs) w.handle(wf, handler, { maxWorkers: 2 });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const js = jetstream(nc);
    for (const wf of wfs) for (let i = 0; i < 3; i++) await js.publish(`sched.fire.${wf}.s${i}`, "{}", { headers: fireHeaders(wf, `s${i}`, i), msgID: `s${i}.${wf}` });
    // Each time three run, one is let go: six in all, never four at once.
    for (let n = 0; n < 6; n++) {
      await waitFor(`three handlers running (${n} done)`, 20_000, () => (handled.length === n && running === Math.min(3, 6 - n) ? true : undefined));
      gates.shift()!();
    }
    await waitFor("all six handled", 10_000, () => (handled.length === 6 ? true : undefined));
    assert.equal(most, 3, "handlers running at once");
  });

  test("fires on the legacy subject sched.fire.<workflow> are handled, an old consumer's unacked ones too", async (t) => {
    const { nc } = await open(t);
    const wf = unique("ts-legacy");
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    // A consumer as a worker from before the per-schedule subjects made
    // it, with two fires it never acked.
    await jsm.consumers.add("SCHED_FIRES", { durable_name: `tsw-fire-${wf}`, filter_subject: `sched.fire.${wf}`, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New });
    for (const id of ["old1", "old2"]) await js.publish(`sched.fire.${wf}`, "{}", { headers: fireHeaders(wf, id, 1), msgID: `${id}.1` });
    const got: Fire[] = [];
    const w = new Worker(nc, { name: "tsw" }).handle(wf, (f) => {
      got.push(f);
    });
    await w.start();
    t.after(() => w.stop({ cancel: true }));
    const main = await jsm.consumers.info("SCHED_FIRES", `tsw-fire-${wf}`);
    assert.equal(main.config.filter_subject, `sched.fire.${wf}.>`);
    const legacy = await jsm.consumers.info("SCHED_FIRES", `tsw-fire-${wf}-legacy`);
    assert.equal(legacy.config.filter_subject, `sched.fire.${wf}`);
    await js.publish(`sched.fire.${wf}`, "{}", { headers: fireHeaders(wf, "new", 2), msgID: "new.2" });
    await js.publish(`sched.fire.${wf}.cur`, "{}", { headers: fireHeaders(wf, "cur", 3), msgID: "cur.3" });
    await waitFor("the old consumer's two fires, the legacy and the per-schedule one", 20_000, () => (got.length === 4 ? true : undefined));
    assert.deepEqual(got.map((f) => f.scheduleId).sort(), ["cur", "new", "old1", "old2"]);
    assert.equal(got.find((f) => f.scheduleId === "new")!.subject, `sched.fire.${wf}`);
  });

  test("bad options name the option", async (t) => {
    const { nc } = await open(t);
    assert.throws(() => new Worker(nc, { ackWait: 10 }), /ackWait 10: must be at least 1000/);
    assert.throws(() => new Worker(nc, { maxWorkers: 0 }), /maxWorkers 0/);
    assert.throws(() => new Worker(nc, { maxWorkersTotal: 0 }), /maxWorkersTotal 0: must be at least 1/);
    assert.throws(() => new Worker(nc, { maxWorkersTotal: 4, maxWorkers: 5 }), /maxWorkers 5: must not exceed maxWorkersTotal 4/);
    assert.throws(() => new Worker(nc, { maxWorkersTotal: 4 }).handle("a", () => {}, { maxWorkers: 8 }), /maxWorkers of fire handler a 8: must not exceed maxWorkersTotal 4/);
    assert.throws(() => new Worker(nc, { name: "a.b" }), /name "a.b"/);
    assert.throws(() => new Worker(nc).handle("a b", () => {}), /workflow "a b"/);
    assert.throws(() => retry(new Error("x"), -1), /the delay must be 0 or more/);
  });
});
