// Worker runs handlers for jetsched fires and wakeups with pkg/worker's
// contract (docs/workers.md): a durable pull consumer per workflow (and,
// for one release, a second on the legacy subject sched.fire.<workflow>),
// at most maxWorkers handlers of a workflow and maxWorkersTotal of all at
// once (fetched only when they can start), in-progress pings, an AbortSignal per delivery that a
// timeout, a stop or a scheduler's cancel request aborts, delivery steered
// by what the handler throws (outcomes.ts), dead letters after the last
// delivery, and completion reports on sched.done.<workflow>.<schedule id>.

import { headers, nanos, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
  type Consumer,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";

import { Cancels } from "./cancels.js";
import {
  parseFire,
  parseWakeup,
  subjectToken,
  subjectWorkflow,
  type CancelRequest,
  type Delivery,
  type DoneReport,
  type Fire,
  type Kind,
  type Wakeup,
} from "./messages.js";
import { CancelRequestedError, HandlerTimeoutError, messageOf, PermanentError, SettleError, StoppedError } from "./outcomes.js";
import { settle, type Settler } from "./settle.js";

/** Options of a Worker; each default is pkg/worker's. */
export interface WorkerOptions {
  /** Prefixes the durable consumers "<name>-fire-<workflow>", "<name>-wakeup-<workflow>". Default "worker". */
  name?: string;
  /** The subject prefix (`scheduler run --name-prefix`); streams "<PREFIX>_FIRES", "<PREFIX>_WAKEUPS". Default "sched". */
  prefix?: string;
  /** How long a delivery may go without an ack or a ping, in ms. Default 30000; at least 1000. */
  ackWait?: number;
  /** Deliveries per message. Default 5. */
  maxDeliver?: number;
  /** The delay before redelivery after failed delivery n (backoff[n-1], the last repeating), in ms. Default 1s, 5s, 30s, 2m. */
  backoff?: number[];
  /** Handlers of one workflow running at once. Default 10, or maxWorkersTotal if that is lower. */
  maxWorkers?: number;
  /** Handlers of all workflows of this worker running at once (pkg/worker's MaxWorkersTotal). Default 256; no handler's maxWorkers may exceed it. */
  maxWorkersTotal?: number;
  /** Bounds each handler call, in ms (its signal aborts with HandlerTimeoutError). Default 0: none. */
  timeout?: number;
  /** Whether a wakeup's condition still holds for its run; a wakeup whose condition does not is acked unhandled. Default: all hold. */
  conditionHolds?: (run: string, condition: string, signal: AbortSignal) => boolean | Promise<boolean>;
  /** Every handler failure and every SettleError (ack, nak, term, in_progress, report, dead_letter, fetch). Must not throw. */
  onError?: (err: unknown, delivery: Delivery) => void;
  /** Log lines (consuming, cancel requests, failures). Default: none. */
  log?: (level: "info" | "warn", message: string, attrs: Record<string, unknown>) => void;
}

/** Per-handler options: they override the worker's. */
export interface HandlerOptions {
  maxWorkers?: number;
  timeout?: number;
}

/** Handles a fire; resolve to ack, throw to fail (see retry, permanent). Honour the signal. */
export type FireHandler = (fire: Fire, signal: AbortSignal) => Promise<void> | void;
/** Handles a wakeup, as FireHandler. */
export type WakeupHandler = (wakeup: Wakeup, signal: AbortSignal) => Promise<void> | void;

interface Registration {
  kind: Kind;
  workflow: string;
  maxWorkers: number;
  /** The places of one start: its loops (the legacy one too) share them. */
  local?: Local;
  timeout: number;
  call: (m: JsMsg, d: Delivery) => (signal: AbortSignal) => Promise<void>;
}

/** One start's state: what stop ends. */
interface Run {
  stopping: boolean;
  batches: Set<ConsumerMessages>;
  handlers: Set<Promise<void>>;
  controllers: Set<AbortController>;
  held: JsMsg[];
  /** maxWorkersTotal places, shared by every handler's loops. */
  places: Places;
  fetchStopped: Promise<void>;
  wake: () => void;
  woken: Promise<void>;
  done: Promise<void>;
}

const fetchWaitMs = 5_000;
const handBackMs = 500;
/** How often the legacy consumer asks for fires published on sched.fire.<workflow> when none came. */
const legacyPollMs = 1_000;
/** How long a pull of the legacy consumer waits: the least nats.js allows. */
const legacyFetchMs = 1_000;

/** The places of one handler: its loops (the legacy one too) share them. */
interface Local {
  free: number;
}

/**
 * Places hands out the worker's places (maxWorkersTotal) to the fetch
 * loops, first come first served, each request also bounded by its
 * handler's free places: a loop takes them before its fetch asks for that
 * many messages, and gives each back as a handler ends or when asked-for
 * messages do not come, so that no message waits in the worker for a place
 * (and ages against ackWait), and a loop whose idle pull gave its places
 * back does not take them again ahead of one that waits.
 */
class Places {
  #free: number;
  #closed = false;
  #queue: { local: Local; max: number; grant: (n: number) => void }[] = [];

  constructor(n: number) {
    this.#free = n;
  }

  /** acquire resolves with the places taken (1 to max), or 0 once closed. */
  acquire(local: Local, max: number): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    return new Promise((grant) => {
      this.#queue.push({ local, max, grant });
      this.#pump();
    });
  }

  /** give hands back n places of local. */
  give(local: Local, n: number): void {
    if (n <= 0) return;
    local.free += n;
    this.#free += n;
    this.#pump();
  }

  /** close answers every waiting and later request with 0 (the worker stops). */
  close(): void {
    this.#closed = true;
    for (const q of this.#queue.splice(0)) q.grant(0);
  }

  #pump(): void {
    for (let i = 0; i < this.#queue.length && this.#free > 0; ) {
      const q = this.#queue[i]!;
      const n = Math.min(q.local.free, this.#free, q.max);
      if (n <= 0) {
        i++;
        continue;
      }
      q.local.free -= n;
      this.#free -= n;
      this.#queue.splice(i, 1);
      q.grant(n);
    }
  }
}

/** A consumer to fetch from; legacy polls (the legacy subject, idle but during an upgrade). */
interface Source {
  consumer: Consumer;
  name: string;
  legacy: boolean;
}

/**
 * Worker consumes fires and wakeups. Register handlers with handle and
 * handleWakeup, then start; stop stops fetching and waits for the running
 * handlers (stop({ cancel: true }) aborts their signals first). Delivery is
 * at-least-once: handlers must be idempotent per slot id.
 */
export class Worker {
  readonly #nc: NatsConnection;
  readonly #o: Required<Omit<WorkerOptions, "conditionHolds" | "onError" | "log">> & WorkerOptions;
  readonly #regs = new Map<string, Registration>();
  readonly #cancels = new Cancels();
  #run: Run | undefined;

  constructor(nc: NatsConnection, options: WorkerOptions = {}) {
    const o = {
      ...options,
      name: options.name ?? "worker",
      prefix: options.prefix ?? "sched",
      ackWait: options.ackWait ?? 30_000,
      maxDeliver: options.maxDeliver ?? 5,
      backoff: options.backoff ?? [1_000, 5_000, 30_000, 120_000],
      maxWorkersTotal: options.maxWorkersTotal ?? 256,
      maxWorkers: options.maxWorkers ?? Math.min(10, options.maxWorkersTotal ?? 256),
      timeout: options.timeout ?? 0,
    };
    token("name", o.name);
    if (!/^[A-Za-z0-9_-]+$/.test(o.prefix)) throw new RangeError(`worker: options.prefix ${JSON.stringify(o.prefix)}: letters, digits, '_' and '-' only`);
    atLeast("ackWait", o.ackWait, 1_000);
    atLeast("maxDeliver", o.maxDeliver, 1);
    atLeast("maxWorkersTotal", o.maxWorkersTotal, 1);
    atLeast("maxWorkers", o.maxWorkers, 1);
    atMost("maxWorkers", o.maxWorkers, o.maxWorkersTotal);
    atLeast("timeout", o.timeout, 0);
    if (o.backoff.length === 0) throw new RangeError("worker: options.backoff: give at least one delay");
    o.backoff.forEach((d, i) => atLeast(`backoff[${i}]`, d, 0));
    this.#nc = nc;
    this.#o = o;
  }

  /** handle registers the fire handler of a workflow; call before start. */
  handle(workflow: string, handler: FireHandler, options: HandlerOptions = {}): this {
    return this.#register("fire", workflow, options, (m, d) => {
      const f = parseFire(m.subject, m.headers, m.data, d.number);
      d.id = f.slotId;
      d.scheduleId = f.scheduleId;
      return async (signal) => handler(f, signal);
    });
  }

  /** handleWakeup registers the wakeup handler of a workflow; call before start. */
  handleWakeup(workflow: string, handler: WakeupHandler, options: HandlerOptions = {}): this {
    const holds = this.#o.conditionHolds;
    return this.#register("wakeup", workflow, options, (m, d) => {
      const w = parseWakeup(m.headers, m.data, d.number);
      d.id = w.id;
      return async (signal) => {
        if (w.condition && holds && !(await holds(w.run, w.condition, signal))) {
          this.#log("info", "stale wakeup dropped: its condition no longer holds", { wakeup: w.id, condition: w.condition });
          return;
        }
        await handler(w, signal);
      };
    });
  }

  #register(kind: Kind, workflow: string, options: HandlerOptions, call: Registration["call"]): this {
    if (this.#run) throw new Error(`worker: already started: register ${kind} handlers before start`);
    token("workflow", workflow);
    const r: Registration = { kind, workflow, call, maxWorkers: options.maxWorkers ?? this.#o.maxWorkers, timeout: options.timeout ?? this.#o.timeout };
    atLeast("maxWorkers", r.maxWorkers, 1);
    atMost(`maxWorkers of ${kind} handler ${workflow}`, r.maxWorkers, this.#o.maxWorkersTotal);
    atLeast("timeout", r.timeout, 0);
    this.#regs.set(`${kind}/${workflow}`, r);
    return this;
  }

  /**
   * start creates or updates one durable consumer per handler, subscribes
   * to the cancel requests of the fire handlers' workflows, and starts
   * fetching. It rejects when it runs already.
   */
  async start(): Promise<void> {
    if (this.#run) throw new Error("worker: already started");
    const sources: [Registration, Source][] = [];
    for (const r of this.#regs.values()) for (const src of await this.#sources(r)) sources.push([r, src]);
    const subs: Subscription[] = [];
    for (const r of this.#regs.values()) {
      if (r.kind !== "fire") continue;
      const callback = (err: Error | null, m: { subject: string; data: Uint8Array }) => {
        if (!err) this.#onCancel(m.subject, m.data);
      };
      subs.push(this.#nc.subscribe(`${this.#o.prefix}.cancel.${r.workflow}.>`, { callback }));
    }
    await this.#nc.flush(); // the cancel subscriptions are in place before the first fire
    let wake!: () => void;
    let fetchStopped!: () => void;
    const run: Run = {
      stopping: false, batches: new Set(), handlers: new Set(), controllers: new Set(), held: [],
      places: new Places(this.#o.maxWorkersTotal),
      fetchStopped: new Promise((res) => (fetchStopped = res)),
      woken: new Promise((res) => (wake = res)),
      wake: () => wake(),
      done: Promise.resolve(),
    };
    for (const r of this.#regs.values()) r.local = { free: r.maxWorkers };
    const loops = sources.map(([r, src]) => this.#loop(run, r, src));
    run.done = (async () => {
      await Promise.all(loops);
      await this.#nc.flush().catch(() => {});
      for (const m of run.held) this.#op(deliveryOf(m, "fire", this.#o.maxDeliver), "nak", () => m.nak(handBackMs));
      fetchStopped();
      while (run.handlers.size > 0) await Promise.allSettled([...run.handlers]);
      for (const s of subs) s.unsubscribe();
    })();
    this.#run = run;
  }

  /**
   * stop stops fetching and waits until the running handlers have
   * returned and their messages are settled. With `cancel`, it aborts
   * their signals first (StoppedError: an error they then throw hands the
   * message back for redelivery). With `signal`, it rejects when that
   * aborts first, the handlers going on (call stop again to wait). A
   * stopped worker can start again.
   */
  async stop(options: { cancel?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    const run = this.#run;
    if (!run) return;
    if (!run.stopping) {
      run.stopping = true;
      run.places.close();
      for (const b of run.batches) b.stop();
      run.wake();
    }
    if (options.cancel) for (const c of run.controllers) c.abort(new StoppedError());
    const signal = options.signal;
    if (signal) {
      signal.throwIfAborted();
      await Promise.race([run.done, new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }))]);
    } else {
      await run.done;
    }
    if (this.#run === run) this.#run = undefined;
  }

  /**
   * #sources creates or updates the handler's durable consumers. A wakeup
   * handler has one; a fire handler two for one release, as pkg/worker's:
   * "<name>-fire-<workflow>" on the per-schedule subjects
   * sched.fire.<workflow>.>, and "<name>-fire-<workflow>-legacy" on
   * sched.fire.<workflow>, where schedulers from before the per-schedule
   * subjects publish, so that no fire is missed while a fleet is upgraded.
   * When "<name>-fire-<workflow>" still filters the legacy subject (made
   * by such a version), the legacy consumer starts where it stopped
   * acking, and the first takes the new filter.
   */
  async #sources(r: Registration): Promise<Source[]> {
    const jsm = await jetstreamManager(this.#nc);
    const up = this.#o.prefix.toUpperCase();
    const durable = `${this.#o.name}-${r.kind}-${r.workflow}`;
    if (r.kind === "wakeup") {
      const c = await this.#consumer(jsm, r, `${up}_WAKEUPS`, durable, `${this.#o.prefix}.wakeup.${r.workflow}`, 0);
      return [{ consumer: c, name: durable, legacy: false }];
    }
    const stream = `${up}_FIRES`;
    const legacy = `${this.#o.prefix}.fire.${r.workflow}`;
    let from = 0;
    const old = await info(jsm, stream, durable);
    if (old?.config.filter_subject === legacy) from = old.ack_floor.stream_seq + 1;
    const l = await this.#consumer(jsm, r, stream, `${durable}-legacy`, legacy, from);
    const c = await this.#consumer(jsm, r, stream, durable, `${legacy}.>`, 0);
    return [
      { consumer: c, name: durable, legacy: false },
      { consumer: l, name: `${durable}-legacy`, legacy: true },
    ];
  }

  /**
   * #consumer creates or updates durable on stream with one filter subject
   * (created and updated on $JS.API.CONSUMER.CREATE.<stream>.<durable>.<filter>,
   * the form the least-privilege worker accounts allow). A new consumer
   * delivers new messages, or from stream sequence from when it is not 0.
   */
  async #consumer(jsm: JetStreamManager, r: Registration, stream: string, durable: string, filter: string, from: number): Promise<Consumer> {
    const settings = { ack_wait: nanos(this.#o.ackWait), max_deliver: this.#o.maxDeliver, description: `jetsched worker ${this.#o.name}`, filter_subject: filter };
    if (await info(jsm, stream, durable)) {
      await jsm.consumers.update(stream, durable, settings); // its deliver policy cannot change: kept
    } else {
      const deliver = from > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : { deliver_policy: DeliverPolicy.New };
      await jsm.consumers.add(stream, { ...settings, ...deliver, durable_name: durable, ack_policy: AckPolicy.Explicit });
    }
    this.#log("info", "consuming", { stream, consumer: durable, subject: filter, max_workers: r.maxWorkers });
    return jetstream(this.#nc).consumers.get(stream, durable);
  }

  /**
   * #loop fetches no more messages than there are free places, the
   * handler's (shared with its other loop) and the worker's
   * (maxWorkersTotal), and starts each at once. The legacy loop asks for
   * one fire, doubling while batches come back full, and pauses
   * legacyPollMs when none came, so that it holds places only briefly.
   */
  async #loop(run: Run, r: Registration, src: Source): Promise<void> {
    const local = r.local!;
    let want = 1;
    while (!run.stopping && !this.#nc.isClosed()) {
      const n = await run.places.acquire(local, src.legacy ? want : Infinity);
      if (n === 0) continue; // closed: the worker stops
      const giveBack = (k: number) => run.places.give(local, k);
      let batch: ConsumerMessages;
      try {
        batch = await src.consumer.fetch({ max_messages: n, expires: src.legacy ? legacyFetchMs : fetchWaitMs });
      } catch (e) {
        giveBack(n);
        this.#failed(new SettleError("fetch", e), deliveryOf(undefined, r.kind, this.#o.maxDeliver, r.workflow));
        await Promise.race([new Promise((res) => setTimeout(res, 1_000)), run.woken]);
        continue;
      }
      run.batches.add(batch);
      if (run.stopping) batch.stop();
      let got = 0;
      try {
        for await (const m of batch) {
          got++;
          if (run.stopping) {
            run.held.push(m);
            giveBack(1);
            continue;
          }
          const p: Promise<void> = this.#deliver(run, r, m).finally(() => {
            run.handlers.delete(p);
            giveBack(1);
          });
          run.handlers.add(p);
        }
      } catch (e) {
        if (!run.stopping) this.#failed(new SettleError("fetch", e), deliveryOf(undefined, r.kind, this.#o.maxDeliver, r.workflow));
      } finally {
        run.batches.delete(batch);
        giveBack(n - got);
      }
      want = Math.max(1, 2 * got);
      if (src.legacy && got === 0 && !run.stopping) await Promise.race([new Promise((res) => setTimeout(res, legacyPollMs)), run.woken]);
    }
  }

  async #deliver(run: Run, r: Registration, m: JsMsg): Promise<void> {
    const d = deliveryOf(m, r.kind, this.#o.maxDeliver);
    let call: (signal: AbortSignal) => Promise<void>;
    try {
      call = r.call(m, d);
    } catch (e) {
      this.#failed(new Error(`worker: not a jetsched ${r.kind}, terminated: ${messageOf(e)}`), d);
      this.#op(d, "term", () => m.term(`not a jetsched ${r.kind}`));
      return;
    }
    const s = this.#settler(run, d, m);
    const early = d.kind === "fire" ? this.#cancels.cancelled(d.id) : undefined;
    if (early) return s.cancelled(early); // the cancel request came before the fire did
    const ctl = new AbortController();
    run.controllers.add(ctl);
    const unregister = d.kind === "fire" ? this.#cancels.running(d.id, ctl) : () => {};
    const timer = r.timeout > 0 ? setTimeout(() => ctl.abort(new HandlerTimeoutError(r.timeout)), r.timeout) : undefined;
    const ping = setInterval(() => this.#op(d, "in_progress", () => m.working()), this.#o.ackWait / 3);
    let outcome: { ok: true } | { ok: false; err: unknown };
    try {
      await call(ctl.signal);
      outcome = { ok: true };
    } catch (err) {
      outcome = { ok: false, err };
    } finally {
      clearInterval(ping);
      clearTimeout(timer);
      unregister();
      run.controllers.delete(ctl);
    }
    await settle(s, d, outcome, ctl.signal, this.#o.backoff);
  }

  /** #settler binds the ways to settle one delivery (settle.ts decides which). */
  #settler(run: Run, d: Delivery, m: JsMsg): Settler {
    const term = (reason: string) => this.#op(d, "term", () => m.term(reason.slice(0, 256)));
    return {
      ack: () => this.#op(d, "ack", () => m.ack()) && this.#report(d, "completed"),
      cancelled: (reason: CancelRequestedError) => {
        this.#log("info", "fire cancelled by the scheduler (overlap cancel_other)", { slot: d.id, cause: reason.message });
        if (term(reason.message)) this.#report(d, "cancelled", reason.message);
      },
      permanent: (err: PermanentError) => {
        this.#failed(err, d);
        if (term(err.message)) this.#report(d, "failed", err.message);
      },
      handBack: async () => {
        await run.fetchStopped;
        this.#op(d, "nak", () => m.nak(handBackMs));
      },
      deadLetter: (err: unknown) => {
        this.#failed(err, d);
        this.#deadLetter(d, m, messageOf(err));
        if (term(`dead-lettered: ${messageOf(err)}`)) this.#report(d, "failed", `dead-lettered after ${d.number} deliveries: ${messageOf(err)}`);
      },
      nak: (err: unknown, after: number) => {
        this.#failed(err, d);
        this.#op(d, "nak", () => m.nak(after));
      },
    };
  }

  #onCancel(subject: string, data: Uint8Array): void {
    const schedule = subject.slice(subject.lastIndexOf(".") + 1);
    let req: CancelRequest | undefined;
    try {
      req = JSON.parse(new TextDecoder().decode(data)) as CancelRequest;
    } catch {
      req = undefined;
    }
    if (!req || typeof req.slot_id !== "string" || !req.slot_id.startsWith(schedule + ".")) {
      this.#log("warn", 'cancel request ignored: not {"slot_id": "<schedule id>.…"} for the subject\'s schedule', { subject });
      return;
    }
    const ran = this.#cancels.cancel(req.slot_id, String(req.by ?? ""));
    this.#log("info", "cancel request", { slot: req.slot_id, by: req.by, running_here: ran });
  }

  #report(d: Delivery, outcome: DoneReport["outcome"], error?: string): boolean {
    if (d.kind !== "fire") return true;
    const body: DoneReport = { slot_id: d.id, outcome, worker: this.#o.name };
    if (error) body.error = error;
    return this.#op(d, "report", () => this.#nc.publish(`${this.#o.prefix}.done.${d.workflow}.${d.scheduleId}`, JSON.stringify(body)));
  }

  /** #deadLetter keeps a copy of a message given up on: its headers less Nats-Msg-Id, and why. */
  #deadLetter(d: Delivery, m: JsMsg, err: string): void {
    const h = headers();
    for (const [k, vs] of m.headers ?? []) {
      if (k.toLowerCase() !== "nats-msg-id") for (const v of vs) h.append(k, v);
    }
    h.set("Sched-Original-Subject", m.subject);
    h.set("Sched-Original-Id", d.id);
    h.set("Sched-Deliveries", String(d.number));
    h.set("Sched-Error", err);
    const key = d.scheduleId || d.id; // a wakeup's id, as one token
    const subject = `${this.#o.prefix}.event.dead_letter.${d.workflow}.${subjectToken(key)}`;
    this.#op(d, "dead_letter", () => this.#nc.publish(subject, m.data, { headers: h }));
  }

  /** #op runs an ack, nak, term, ping or publish; a failure goes to onError. It says whether op succeeded. */
  #op(d: Delivery, op: string, fn: () => unknown): boolean {
    try {
      fn();
      return true;
    } catch (e) {
      this.#failed(new SettleError(op, e), d);
      return false;
    }
  }

  #failed(err: unknown, d: Delivery): void {
    this.#log("warn", messageOf(err), { kind: d.kind, workflow: d.workflow, slot: d.id, delivery: d.number });
    try {
      this.#o.onError?.(err, d);
    } catch {
      // onError must not throw; a worker does not stop for it
    }
  }

  #log(level: "info" | "warn", message: string, attrs: Record<string, unknown>): void {
    this.#o.log?.(level, message, attrs);
  }
}

function deliveryOf(m: JsMsg | undefined, kind: Kind, maxDeliver: number, workflow = ""): Delivery {
  const number = m?.info.deliveryCount ?? 0;
  return {
    kind, workflow: m ? subjectWorkflow(m.subject) : workflow, subject: m?.subject ?? "",
    id: m?.headers?.get("Nats-Msg-Id") ?? "", scheduleId: "", number, last: number >= maxDeliver,
  };
}

function token(what: string, s: string): void {
  if (!/^[A-Za-z0-9_=-]{1,128}$/.test(s)) {
    throw new RangeError(`worker: ${what} ${JSON.stringify(s)}: 1 to 128 letters, digits, '-', '_' or '='`);
  }
}

/** info is the consumer's info, or undefined when it does not exist. */
async function info(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (e) {
    if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
    throw e;
  }
}

function atMost(option: string, v: number, max: number): void {
  if (v > max) throw new RangeError(`worker: ${option} ${v}: must not exceed maxWorkersTotal ${max}`);
}

function atLeast(option: string, v: number, min: number): void {
  if (!Number.isFinite(v) || v < min) throw new RangeError(`worker: ${option} ${v}: must be at least ${min}`);
}
