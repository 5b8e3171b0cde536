// The Client against a real scheduler: every call, and the error codes.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Client, ConflictError, InvalidError, JetschedError, NoSchedulerError, NotFoundError, type ScheduleInfo } from "../src/index.js";
import { noServer, open, triggerWhenPlanned, unique, waitFor } from "./helpers.js";

describe("Client: schedules", { skip: noServer }, () => {
  test("put creates, replaces, and writes nothing for the same spec", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-put");
    const spec = { workflow: "ts-put", cron: "0 9 * * 1-5", tz: "Europe/Paris", input: { region: "eu" } };
    const first = await client.put(spec, { id });
    assert.deepEqual({ id: first.id, created: first.created, unchanged: first.unchanged }, { id, created: true, unchanged: false });
    const again = await client.put(spec, { id });
    assert.equal(again.unchanged, true);
    assert.equal(again.revision, first.revision);
    const got = await client.get(id);
    assert.equal(got.revision, first.revision);
    assert.equal(got.spec.cron, "0 9 * * 1-5");
    assert.deepEqual(got.spec.input, { region: "eu" });

    const replaced = await client.put({ ...spec, cron: "0 10 * * 1-5" }, { id });
    assert.equal(replaced.created, false);
    assert.ok(replaced.revision > first.revision);
  });

  test("put without an id gets the content hash the scheduler derives", async (t) => {
    const { client } = await open(t);
    const wf = unique("ts-hash");
    const r = await client.put({ workflow: wf, every: "1h", input: { n: 1 } });
    assert.match(r.id, new RegExp(`^${wf}-[0-9a-f]{12}$`));
    assert.equal((await client.put({ workflow: wf, every: "1h", input: { n: 1 } })).unchanged, true);
  });

  test("createOnly and ifRevision refuse what they do not expect", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-cas");
    const spec = { workflow: "ts-cas", every: "1h" };
    const { revision } = await client.put(spec, { id, createOnly: true });
    await assert.rejects(client.put(spec, { id, createOnly: true }), (e) => e instanceof ConflictError && e.code === "conflict");
    await assert.rejects(client.put({ ...spec, every: "2h" }, { id, ifRevision: revision + 5 }), ConflictError);
    const ok = await client.put({ ...spec, every: "2h" }, { id, ifRevision: revision });
    assert.ok(ok.revision > revision);
    await assert.rejects(client.remove(id, { ifRevision: revision }), ConflictError);
    await assert.rejects(client.put(spec, { id: unique("ts-cas-gone"), ifRevision: 1 }), NotFoundError);
    await assert.rejects(client.put(spec, { id, createOnly: true, ifRevision: 1 }), (e) => e instanceof InvalidError && e.field === "if_revision");
    await assert.rejects(client.put(spec, { id, ifRevision: 0 }), (e) => e instanceof InvalidError && e.field === "if_revision");
  });

  test("invalid input is an InvalidError naming the field, and nothing is written", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-bad");
    await assert.rejects(client.put({ workflow: "ts-bad", cron: "0 25 * * *" }, { id }), (e) => {
      assert.ok(e instanceof InvalidError, String(e));
      assert.equal(e.code, "invalid");
      assert.equal(e.field, "cron");
      assert.equal(e.verb, "schedule.create");
      assert.match(e.message, /invalid cron "0 25 \* \* \*"/);
      return true;
    });
    await assert.rejects(client.put({ workflow: "ts-bad", cron: "* * * * *", every: "1m" }, { id }), (e) => e instanceof InvalidError && e.field === "recurrence");
    await assert.rejects(client.put({ workflow: "ts-bad", every: "1h", nosuchfield: 1 }, { id }), (e) => e instanceof InvalidError && e.field === "nosuchfield");
    await assert.rejects(client.get(id), NotFoundError);
    await assert.rejects(client.get("not a valid id"), (e) => e instanceof InvalidError && e.field === "id");
    await assert.rejects(client.list({ limit: 5000 }), (e) => e instanceof InvalidError && e.field === "limit");
  });

  test("list pages in id order, and schedules iterates over every page", async (t) => {
    const { client } = await open(t);
    const prefix = unique("ts-list");
    const ids = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    for (const id of ids) await client.put({ workflow: "ts-list", every: "1h" }, { id });
    const page = await waitFor("three schedules listed", 10_000, async () => {
      const p = await client.list({ prefix, limit: 2 });
      return p.total === 3 ? p : undefined;
    });
    assert.deepEqual(page.items.map((i) => i.id), ids.slice(0, 2));
    assert.ok(page.next_cursor);
    const rest = await client.list({ prefix, limit: 2, cursor: page.next_cursor });
    assert.deepEqual(rest.items.map((i) => i.id), ids.slice(2));
    assert.equal(rest.next_cursor, undefined);
    const all: ScheduleInfo[] = [];
    for await (const s of client.schedules({ prefix, limit: 1 })) all.push(s);
    assert.deepEqual(all.map((i) => i.id), ids);
    const st = await client.status({ prefix });
    assert.equal(st.total, 3);
    assert.ok(st.summary.schedules >= 3);
  });

  test("trigger, pause with a note and an end, resume, skip", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-ops");
    await client.put({ workflow: "ts-ops", cron: "0 0 1 1 *" }, { id });
    const slot = await triggerWhenPlanned(client, id);
    assert.match(slot, new RegExp(`^${id}\\.trigger-\\d+$`));
    const until = new Date(Date.now() + 3_600_000);
    const paused = await client.pause(id, { note: "deploy", until });
    assert.equal(paused.paused?.note, "deploy");
    assert.equal(new Date(paused.paused!.until!).getTime(), until.getTime());
    assert.equal((await client.get(id)).state?.paused?.note, "deploy");
    const resumed = await client.resume(id);
    assert.equal(resumed.paused, undefined);
    await assert.rejects(client.pause(id, { until: new Date(Date.now() - 60_000) }), (e) => e instanceof InvalidError && e.field === "until");
    await assert.rejects(client.pause(id, { until: new Date(Number.NaN) }), (e) => e instanceof InvalidError && e.field === "until");
    const before = Date.now();
    const forTwoHours = await client.pause(id, { note: "window", for: "2 hours" });
    const end = new Date(forTwoHours.paused!.until!).getTime();
    assert.ok(end >= before + 7_200_000 - 1000 && end <= Date.now() + 7_200_000, `paused until ${forTwoHours.paused!.until}`);
    await assert.rejects(client.pause(id, { for: "2 horus" }), (e) => e instanceof InvalidError && e.field === "for");
    await client.resume(id);
    const skipped = await client.skip(id, 2);
    assert.equal(skipped.skip_next, 2);
    await assert.rejects(client.trigger(unique("ts-none")), NotFoundError);
  });

  test("remove deletes; a second remove is not_found", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-rm");
    const { revision } = await client.put({ workflow: "ts-rm", every: "1h" }, { id });
    await client.remove(id, { ifRevision: revision });
    await assert.rejects(client.get(id), (e) => e instanceof NotFoundError && e.code === "not_found" && /not found: schedule/.test(e.message));
    await assert.rejects(client.remove(id), NotFoundError);
  });

  test("call reaches any verb; an unknown one is not_found with field verb", async (t) => {
    const { client } = await open(t);
    await assert.rejects(client.call("schedule.nosuchverb", {}), (e) => e instanceof NotFoundError && e.field === "verb");
    const cals = await client.call<{ items: unknown[]; total: number }>("calendar.list", {});
    assert.ok(Array.isArray(cals.items));
  });

  test("no scheduler on the prefix: NoSchedulerError", async (t) => {
    const { nc } = await open(t);
    const c = new Client(nc, { prefix: "nosuchprefix", timeout: 2_000 });
    await assert.rejects(c.get("x"), (e) => e instanceof NoSchedulerError && e.subject === "nosuchprefix.api.schedule.get");
  });

  test("bad client options name the option", async (t) => {
    const { nc } = await open(t);
    assert.throws(() => new Client(nc, { prefix: "a.b" }), (e) => e instanceof InvalidError && e.field === "prefix");
    assert.throws(() => new Client(nc, { timeout: 0 }), (e) => e instanceof InvalidError && e.field === "timeout");
    assert.ok(new InvalidError("v", { code: "invalid", message: "m" }) instanceof JetschedError);
  });
});

describe("Client: update", { skip: noServer }, () => {
  test("update changes the fields a patch names, says what changed, and dryRun writes nothing", async (t) => {
    const { client } = await open(t);
    const id = unique("ts-upd");
    const { revision } = await client.put({ workflow: "ts-upd", cron: "0 2 * * *", tz: "Europe/Paris", input: { full: true } }, { id });
    const dry = await client.update(id, { cron: "0 3 * * *" }, { dryRun: true });
    assert.equal(dry.dry_run, true);
    assert.deepEqual(dry.changes, [{ field: "cron", from: "0 2 * * *", to: "0 3 * * *" }]);
    assert.equal(dry.spec.cron, "0 3 * * *");
    assert.equal((await client.get(id)).revision, revision);
    const done = await client.update(id, { cron: "0 3 * * *", description: "moved" }, { ifRevision: revision });
    assert.equal(done.dry_run, undefined);
    assert.equal(done.unchanged, false);
    assert.ok(done.revision > revision);
    assert.equal(done.spec.tz, "Europe/Paris"); // the fields the patch does not name stay
    assert.deepEqual(done.spec.input, { full: true });
    const removed = await client.update(id, { description: null });
    assert.equal(removed.spec.description, undefined);
    assert.deepEqual(removed.changes, [{ field: "description", from: "moved" }]);
    const every = await client.update(id, { every: "1h" }); // one recurrence replaces the other
    assert.equal(every.spec.cron, undefined);
    const replaced = await client.put({ workflow: "ts-upd", every: "2h" }, { id, dryRun: true });
    assert.equal(replaced.dry_run, true);
    assert.equal((await client.get(id)).spec.every, "1h");
    await assert.rejects(client.update(id, { cron: "0 4 * * *" }, { ifRevision: revision }), ConflictError);
    await assert.rejects(client.update(id, { cron: "0 25 * * *" }), (e) => e instanceof InvalidError && e.field === "cron");
    await assert.rejects(client.update(unique("ts-upd-none"), { cron: "0 4 * * *" }), NotFoundError);
  });
});

describe("Client: timers", { skip: noServer }, () => {
  test("addTimer, getTimer, listTimers, timers, cancelTimer, cancelTimers", async (t) => {
    const { client } = await open(t);
    const run = unique("ts-run");
    const a = await client.addTimer({ run, step: "remind", workflow: "ts-timers", when: "1h", payload: { order: 42 } });
    assert.equal(a.key, `${run}.remind`);
    assert.equal(a.timer.workflow, "ts-timers");
    const at = new Date(Date.now() + 7_200_000);
    const blob = "x".repeat(2048);
    const e = await client.addTimer({ run, step: "escalate", workflow: "ts-timers", at, condition: "awaiting", payload: { blob } });
    // wakeup.get reads the bucket: the timer at once, whole, with its revision.
    const got = await client.getTimer(run, "escalate");
    assert.equal(new Date(got.due).getTime(), at.getTime());
    assert.equal(got.condition, "awaiting");
    assert.equal(got.revision, e.revision);
    assert.deepEqual(got.payload, { blob });
    assert.equal(got.omitted, undefined);
    await assert.rejects(client.getTimer(run, "bad*step"), (err) => err instanceof InvalidError && err.field === "step");
    const page = await client.listTimers({ run, limit: 1 });
    assert.equal(page.total, 2);
    assert.equal(page.items[0]!.step, "escalate");
    const steps: string[] = [];
    for await (const x of client.timers({ run, limit: 1 })) steps.push(x.step);
    assert.deepEqual(steps, ["escalate", "remind"]);
    assert.equal(await client.cancelTimer(run, "remind"), "cancelled");
    await assert.rejects(client.cancelTimer(run, "remind"), NotFoundError);
    await assert.rejects(client.getTimer(run, "remind"), NotFoundError);
    assert.equal(await client.cancelTimers(run), 1);
    await assert.rejects(client.addTimer({ run, step: "x", workflow: "ts-timers", when: "1 parsec" }), (e) => e instanceof InvalidError && e.field === "when");
    await assert.rejects(client.addTimer({ run: "bad*run", step: "x", workflow: "ts-timers", when: "1h" }), (e) => e instanceof InvalidError && e.field === "run");
  });
});
