// A complete jetsched worker in TypeScript (nats.js v3), written from
// docs/workers.md alone: a durable pull consumer on sched.fire.<workflow>.>,
// at most MAX_WORKERS fires at once (fetched only when they can start),
// in-progress pings, redelivery with backoff, a dead letter after the last
// delivery, completion reports on sched.done.<workflow>.<schedule id>, and
// cancel requests (overlap cancel_other) on sched.cancel.<workflow>.>.
//
//   npm install && WORKFLOW=demo-heartbeat NATS_URL=nats://127.0.0.1:4222 npx tsx worker.ts
//
// Environment: NATS_URL, WORKFLOW, NAME (consumer "<NAME>-fire-<WORKFLOW>"),
// MAX_WORKERS, WORK_MS (each fire's simulated work), FAIL_RATE (0..1),
// INBOX_PREFIX (with the least-privilege accounts: _INBOX_<user>),
// NATS_USER / NATS_PASSWORD, EXIT_AFTER (stop after that many fires).
import { connect, headers } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";

const env = process.env;
const workflow = env.WORKFLOW ?? "demo-heartbeat";
const name = env.NAME ?? "ts-worker";
const maxWorkers = Number(env.MAX_WORKERS ?? "4");
const workMs = Number(env.WORK_MS ?? "0");
const failRate = Number(env.FAIL_RATE ?? "0");
const exitAfter = Number(env.EXIT_AFTER ?? "0");
const ackWaitMs = 30_000;
const maxDeliver = 5;
const backoffMs = [1_000, 5_000, 30_000, 120_000];

const durable = `${name}-fire-${workflow}`;
const nc = await connect({
  servers: env.NATS_URL ?? "nats://127.0.0.1:4222",
  inboxPrefix: env.INBOX_PREFIX,
  user: env.NATS_USER,
  pass: env.NATS_PASSWORD,
});
const jsm = await jetstreamManager(nc);
// One filter subject and a name: nats.js creates it on
// $JS.API.CONSUMER.CREATE.SCHED_FIRES.<durable>.sched.fire.<workflow>.>, the
// form the least-privilege worker accounts allow.
await jsm.consumers.add("SCHED_FIRES", {
  durable_name: durable,
  filter_subject: `sched.fire.${workflow}.>`, // every schedule of the workflow
  ack_policy: AckPolicy.Explicit,
  ack_wait: ackWaitMs * 1_000_000, // nanoseconds
  max_deliver: maxDeliver,
  deliver_policy: DeliverPolicy.New,
});
const consumer = await jetstream(nc).consumers.get("SCHED_FIRES", durable);

// Cancel requests: {"schedule", "slot_id", "by", "at"}. Every instance
// gets each one; the one running the slot aborts it.
const running = new Map<string, AbortController>();
nc.subscribe(`sched.cancel.${workflow}.>`, {
  callback: (err, msg) => {
    if (err) return;
    const req = msg.json<{ slot_id: string; by: string }>();
    running.get(req.slot_id)?.abort(`cancelled by the scheduler: slot ${req.by} replaces it`);
  },
});

function report(schedule: string, slot: string, outcome: string, error?: string) {
  nc.publish(`sched.done.${workflow}.${schedule}`, JSON.stringify({ slot_id: slot, outcome, error, worker: name }));
}

function deadLetter(m: JsMsg, schedule: string, slot: string, err: string) {
  const h = headers();
  for (const [k, v] of m.headers ?? []) if (k !== "Nats-Msg-Id") for (const x of v) h.append(k, x);
  h.set("Sched-Original-Subject", m.subject);
  h.set("Sched-Original-Id", slot);
  h.set("Sched-Deliveries", String(m.info.deliveryCount));
  h.set("Sched-Error", err);
  nc.publish(`sched.event.dead_letter.${workflow}.${schedule}`, m.data, { headers: h });
}

// The handler: the work of one fire. It must be idempotent per slot id.
async function handle(input: unknown, signal: AbortSignal): Promise<void> {
  if (workMs > 0) {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, workMs);
      signal.addEventListener("abort", () => { clearTimeout(t); reject(new Error(String(signal.reason))); });
    });
  }
  if (Math.random() < failRate) throw new Error("simulated failure");
}

let handled = 0;
async function run(m: JsMsg): Promise<void> {
  const schedule = m.headers?.get("Sched-Schedule-Id") ?? "";
  const slot = m.headers?.get("Nats-Msg-Id") ?? "";
  const scheduledAt = new Date(m.headers?.get("Sched-Scheduled-At") ?? "");
  const delivery = m.info.deliveryCount;
  if (!schedule || !slot || Number.isNaN(scheduledAt.getTime())) {
    m.term("not a jetsched fire");
    return;
  }
  const abort = new AbortController();
  running.set(slot, abort);
  const ping = setInterval(() => m.working(), ackWaitMs / 3); // in-progress: keeps AckWait from running out
  try {
    const lateness = Date.now() - scheduledAt.getTime();
    console.log(`fire ${slot} delivery ${delivery} lateness ${lateness}ms input ${m.string()}`);
    await handle(m.data.length ? m.json() : null, abort.signal);
    m.ack();
    report(schedule, slot, "completed");
    handled++;
  } catch (e) {
    const err = e instanceof Error ? e.message : String(e);
    if (abort.signal.aborted) { // a cancel request: never redelivered
      m.term(err);
      report(schedule, slot, "cancelled", err);
    } else if (delivery >= maxDeliver) { // the last delivery: keep a copy, give up
      deadLetter(m, schedule, slot, err);
      m.term(`dead-lettered: ${err}`);
      report(schedule, slot, "failed", `dead-lettered after ${delivery} deliveries: ${err}`);
    } else {
      const delay = backoffMs[Math.min(delivery, backoffMs.length) - 1];
      console.log(`fire ${slot} failed (${err}); redelivery in ${delay}ms`);
      m.nak(delay);
    }
  } finally {
    clearInterval(ping);
    running.delete(slot);
  }
}

// The fetch loop: ask for no more messages than there are free places,
// so that none waits in a buffer while AckWait runs.
let stopping = false;
const inFlight = new Set<Promise<void>>();
process.on("SIGINT", () => { stopping = true; });
process.on("SIGTERM", () => { stopping = true; });
console.log(`consuming sched.fire.${workflow}.> as ${durable}, ${maxWorkers} at once`);
while (!stopping && !(exitAfter > 0 && handled >= exitAfter)) {
  const free = maxWorkers - inFlight.size;
  if (free === 0) {
    await Promise.race(inFlight);
    continue;
  }
  const batch = await consumer.fetch({ max_messages: free, expires: 5_000 });
  for await (const m of batch) {
    const p = run(m).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
}
await Promise.all(inFlight); // let the running fires finish
await nc.drain();
console.log(`stopped after ${handled} fires`);
