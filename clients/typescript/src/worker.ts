// Worker runs handlers for jetsched fires and wakeups with pkg/worker's
// contract (docs/workers.md): a durable pull consumer per workflow, at
// most maxWorkers handlers of a workflow at once (fetched only when they
// can start), in-progress pings, an AbortSignal per delivery that a
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
  type ConsumerMessages,
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
  /** Handlers of one workflow running at once. Default 10. */
  maxWorkers?: number;
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
  fetchStopped: Promise<void>;
  wake: () => void;
  woken: Promise<void>;
  done: Promise<void>;
}

const fetchWaitMs = 5_000;
const handBackMs = 500;

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
      maxWorkers: options.maxWorkers ?? 10,
      timeout: options.timeout ?? 0,
    };
    token("name", o.name);
    if (!/^[A-Za-z0-9_-]+$/.test(o.prefix)) throw new RangeError(`worker: options.prefix ${JSON.stringify(o.prefix)}: letters, digits, '_' and '-' only`);
    atLeast("ackWait", o.ackWait, 1_000);
    atLeast("maxDeliver", o.maxDeliver, 1);
    atLeast("maxWorkers", o.maxWorkers, 1);
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
    const consumers: [Registration, Consumer][] = [];
    for (const r of this.#regs.values()) consumers.push([r, await this.#consumer(r)]);
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
      fetchStopped: new Promise((res) => (fetchStopped = res)),
      woken: new Promise((res) => (wake = res)),
      wake: () => wake(),
      done: Promise.resolve(),
    };
    const loops = consumers.map(([r, c]) => this.#loop(run, r, c));
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

  async #consumer(r: Registration): Promise<Consumer> {
    const jsm = await jetstreamManager(this.#nc);
    const up = this.#o.prefix.toUpperCase();
    const stream = r.kind === "fire" ? `${up}_FIRES` : `${up}_WAKEUPS`;
    const durable = `${this.#o.name}-${r.kind}-${r.workflow}`;
    const filter = r.kind === "fire" ? `${this.#o.prefix}.fire.${r.workflow}.>` : `${this.#o.prefix}.wakeup.${r.workflow}`;
    const settings = { ack_wait: nanos(this.#o.ackWait), max_deliver: this.#o.maxDeliver, description: `jetsched worker ${this.#o.name}` };
    try {
      await jsm.consumers.info(stream, durable);
      await jsm.consumers.update(stream, durable, settings);
    } catch (e) {
      if (!(e instanceof JetStreamApiError && e.code === JetStreamApiCodes.ConsumerNotFound)) throw e;
      // A name and one filter subject: created on
      // $JS.API.CONSUMER.CREATE.<stream>.<durable>.<filter>, the form the
      // least-privilege worker accounts allow.
      await jsm.consumers.add(stream, { ...settings, durable_name: durable, filter_subject: filter, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New });
    }
    this.#log("info", "consuming", { stream, consumer: durable, subject: filter, max_workers: r.maxWorkers });
    return jetstream(this.#nc).consumers.get(stream, durable);
  }

  /** #loop fetches no more messages than the handler has free places, and starts each at once. */
  async #loop(run: Run, r: Registration, consumer: Consumer): Promise<void> {
    const running = new Set<Promise<void>>();
    while (!run.stopping && !this.#nc.isClosed()) {
      const free = r.maxWorkers - running.size;
      if (free <= 0) {
        await Promise.race([...running, run.woken]);
        continue;
      }
      let batch: ConsumerMessages;
      try {
        batch = await consumer.fetch({ max_messages: free, expires: fetchWaitMs });
      } catch (e) {
        this.#failed(new SettleError("fetch", e), deliveryOf(undefined, r.kind, this.#o.maxDeliver, r.workflow));
        await Promise.race([new Promise((res) => setTimeout(res, 1_000)), run.woken]);
        continue;
      }
      run.batches.add(batch);
      if (run.stopping) batch.stop();
      try {
        for await (const m of batch) {
          if (run.stopping) {
            run.held.push(m);
            continue;
          }
          const p: Promise<void> = this.#deliver(run, r, m).finally(() => {
            running.delete(p);
            run.handlers.delete(p);
          });
          running.add(p);
          run.handlers.add(p);
        }
      } catch (e) {
        if (!run.stopping) this.#failed(new SettleError("fetch", e), deliveryOf(undefined, r.kind, this.#o.maxDeliver, r.workflow));
      } finally {
        run.batches.delete(batch);
      }
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

function atLeast(option: string, v: number, min: number): void {
  if (!Number.isFinite(v) || v < min) throw new RangeError(`worker: ${option} ${v}: must be at least ${min}`);
}
