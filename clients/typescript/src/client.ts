// Client speaks jetsched's admin API (the NATS micro service "jetsched" on
// sched.api.>, docs/api.md): request/reply in JSON, errors with a code and
// a field. Any scheduler of the fleet answers; all state is in JetStream.

import { headers, type NatsConnection, RequestError } from "@nats-io/transport-node";

import { apiError, invalid, NoSchedulerError, type ErrorBody } from "./errors.js";
import type {
  Json,
  Page,
  PutResult,
  ScheduleInfo,
  Spec,
  State,
  StatusPage,
  StoredTimer,
  TimerInfo,
  TimerRequest,
  TimerResult,
  UpdateResult,
} from "./types.js";

/** Options of a Client. */
export interface ClientOptions {
  /** The subject prefix: `scheduler run --name-prefix`. Default "sched". */
  prefix?: string;
  /** How long a request waits for its reply, in milliseconds. Default 10000. */
  timeout?: number;
  /** Sent as the Sched-Actor header: the audit trail records it as `claimed_actor`. */
  actor?: string;
}

/** Options of put. `createOnly` and `ifRevision` exclude each other. */
export interface PutOptions {
  /** The schedule's id; default the spec's `id`, else the content hash the scheduler derives. */
  id?: string;
  /** Refuse an id that exists (ConflictError) instead of replacing it. */
  createOnly?: boolean;
  /** Replace only if the stored spec is still at this revision (ConflictError otherwise; NotFoundError when gone). */
  ifRevision?: number;
  /** Check the write and say what it would do (`dry_run`, `changes`), writing nothing. */
  dryRun?: boolean;
}

/** Options of update. */
export interface UpdateOptions {
  /** Write only if the stored spec is still at this revision (ConflictError otherwise). */
  ifRevision?: number;
  /** Say what would change, write nothing. */
  dryRun?: boolean;
}

/** Selects and pages schedules (list, schedules, status). */
export interface ListOptions {
  /** A previous page's `next_cursor`; absent for the first page. */
  cursor?: string;
  /** The page size: default 100, at most 1000. */
  limit?: number;
  workflow?: string;
  /** One of "active", "planned", "paused", "ended", "invalid". */
  state?: string;
  /** Of the id. */
  prefix?: string;
}

/** Selects and pages timers (listTimers, timers). */
export interface TimerListOptions {
  run?: string;
  workflow?: string;
  /** A label selector: "team=billing,tier!=gold", "env in (a,b)", "!legacy". */
  selector?: string;
  cursor?: string;
  limit?: number;
}

/** The outcome of cancelTimer: "cancelled", or "fired" when a scheduler had already claimed it. */
export type CancelOutcome = "cancelled" | "fired";

/**
 * Client registers and operates schedules and timers through the admin
 * API of a running scheduler, over a NATS connection the caller owns (and
 * closes). Every method sends one request (the listings' iterators one per
 * page) and rejects with a JetschedError subclass for an error reply
 * (InvalidError naming the field, NotFoundError, ConflictError, ...), a
 * NoSchedulerError when no scheduler answers.
 */
export class Client {
  readonly #nc: NatsConnection;
  readonly #prefix: string;
  readonly #timeout: number;
  readonly #actor: string | undefined;

  constructor(nc: NatsConnection, options: ClientOptions = {}) {
    const prefix = options.prefix ?? "sched";
    if (!/^[A-Za-z0-9_-]+$/.test(prefix)) {
      throw invalid("client", "prefix", `${JSON.stringify(prefix)}: letters, digits, '_' and '-' only`);
    }
    const timeout = options.timeout ?? 10_000;
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw invalid("client", "timeout", `${timeout}: a positive number of milliseconds`);
    }
    this.#nc = nc;
    this.#prefix = prefix;
    this.#timeout = timeout;
    this.#actor = options.actor;
  }

  /**
   * call sends one request to the verb ("schedule.get", ...) and returns
   * its decoded reply: the door to verbs this client has no method for.
   */
  async call<T>(verb: string, request: object): Promise<T> {
    const subject = `${this.#prefix}.api.${verb}`;
    const h = headers();
    if (this.#actor) h.set("Sched-Actor", this.#actor);
    let reply;
    try {
      reply = await this.#nc.request(subject, JSON.stringify(request), { timeout: this.#timeout, headers: h });
    } catch (e) {
      if (e instanceof RequestError && e.isNoResponders()) throw new NoSchedulerError(subject, { cause: e });
      throw e;
    }
    const code = reply.headers?.get("Nats-Service-Error-Code");
    if (code) {
      let body: ErrorBody;
      try {
        body = reply.json<ErrorBody>();
      } catch {
        body = { code, message: reply.headers?.get("Nats-Service-Error") ?? code };
      }
      throw apiError(verb, body);
    }
    return reply.json<T>();
  }

  /**
   * put registers a schedule, or replaces the one stored under its id
   * (unless `createOnly`). Putting the same spec again writes nothing
   * (`unchanged`), so a service can put its schedules at every start.
   */
  async put(spec: Spec, options: PutOptions = {}): Promise<PutResult> {
    const verb = options.ifRevision !== undefined ? "schedule.update" : "schedule.create";
    if (options.createOnly && options.ifRevision !== undefined) {
      throw invalid(verb, "if_revision", "createOnly and ifRevision exclude each other");
    }
    const req: Record<string, unknown> = { spec };
    if (options.id !== undefined) req.id = options.id;
    if (options.ifRevision !== undefined) {
      req.if_revision = revision(verb, options.ifRevision);
    } else if (!options.createOnly) {
      req.upsert = true;
    }
    if (options.dryRun) req.dry_run = true;
    return this.call<PutResult>(verb, req);
  }

  /**
   * update changes only the fields the patch names, over the spec stored
   * when the write is made: each replaces the stored field's whole value (an
   * `input` is replaced, not merged), null removes it, and a patch that
   * sets one recurrence removes the others (docs/api.md, "Changing some
   * fields"). It says what changed; with `dryRun` it writes nothing.
   */
  async update(id: string, patch: Record<string, Json | undefined>, options: UpdateOptions = {}): Promise<UpdateResult> {
    const req: Record<string, unknown> = { id, patch };
    if (options.ifRevision !== undefined) req.if_revision = revision("schedule.update", options.ifRevision);
    if (options.dryRun) req.dry_run = true;
    return this.call<UpdateResult>("schedule.update", req);
  }

  /** remove deletes a schedule; with `ifRevision` only if it is still at that revision. */
  async remove(id: string, options: { ifRevision?: number } = {}): Promise<void> {
    const req: Record<string, unknown> = { id };
    if (options.ifRevision !== undefined) req.if_revision = revision("schedule.delete", options.ifRevision);
    await this.call("schedule.delete", req);
  }

  /** get returns one schedule: its spec (whole), revision and state. */
  async get(id: string): Promise<ScheduleInfo> {
    return this.call<ScheduleInfo>("schedule.get", { id });
  }

  /** list returns one page of schedules, in id order. */
  async list(options: ListOptions = {}): Promise<Page<ScheduleInfo>> {
    return this.call<Page<ScheduleInfo>>("schedule.list", options);
  }

  /** schedules iterates over every schedule the options select, a page at a time. */
  schedules(options: ListOptions = {}): AsyncIterable<ScheduleInfo> {
    return pages(options, (o) => this.list(o));
  }

  /** status returns the summary of every schedule and a page of rows. */
  async status(options: ListOptions = {}): Promise<StatusPage> {
    return this.call<StatusPage>("status", options);
  }

  /** trigger fires the schedule once now, as an extra slot, and returns the slot id. */
  async trigger(id: string, options: { note?: string } = {}): Promise<string> {
    const r = await this.call<{ slot_id: string }>("schedule.trigger", { id, ...options });
    return r.slot_id;
  }

  /**
   * pause stops the schedule's regular fires until resume, until `until`,
   * or for a duration from now (`for`: "90m", "2 hours", "1d 3h"; not with
   * `until`).
   */
  async pause(id: string, options: { note?: string; until?: Date | string; for?: string } = {}): Promise<State> {
    const req: Record<string, unknown> = { id };
    if (options.note !== undefined) req.note = options.note;
    if (options.until !== undefined) req.until = time("schedule.pause", "until", options.until);
    if (options.for !== undefined) req.for = options.for;
    return this.call<State>("schedule.pause", req);
  }

  /** resume ends a pause. */
  async resume(id: string): Promise<State> {
    return this.call<State>("schedule.resume", { id });
  }

  /** skip drops the schedule's next `count` slots (default 1). */
  async skip(id: string, count?: number): Promise<State> {
    return this.call<State>("schedule.skip", count === undefined ? { id } : { id, count });
  }

  /**
   * addTimer sets a timer that wakes `run` at `step`: one message on
   * sched.wakeup.<workflow> when due. The same run and step again replace it.
   */
  async addTimer(t: TimerRequest): Promise<TimerResult> {
    const req: Record<string, unknown> = { run: t.run, step: t.step, workflow: t.workflow };
    const fields: [string, unknown][] = [
      ["when", t.when],
      ["when_expr", t.whenExpr],
      ["zone", t.zone],
      ["calendar", t.calendar],
      ["payload", t.payload],
      ["condition", t.condition],
      ["condition_key", t.conditionKey],
      ["expire_after", t.expireAfter],
    ];
    for (const [k, v] of fields) if (v !== undefined) req[k] = v;
    if (t.at !== undefined) req.at = time("wakeup.add", "at", t.at);
    return this.call<TimerResult>("wakeup.add", req);
  }

  /** cancelTimer cancels one timer; NotFoundError when none is pending. */
  async cancelTimer(run: string, step: string): Promise<CancelOutcome> {
    const r = await this.call<{ outcome: CancelOutcome }>("wakeup.cancel", { run, step });
    return r.outcome;
  }

  /** cancelTimers cancels every pending timer of a run and says how many. */
  async cancelTimers(run: string): Promise<number> {
    const r = await this.call<{ cancelled: number }>("wakeup.cancel", { run });
    return r.cancelled;
  }

  /** listTimers returns one page of pending timers, in key order (run, then step). */
  async listTimers(options: TimerListOptions = {}): Promise<Page<TimerInfo>> {
    return this.call<Page<TimerInfo>>("wakeup.list", options);
  }

  /** timers iterates over every pending timer the options select. */
  timers(options: TimerListOptions = {}): AsyncIterable<TimerInfo> {
    return pages(options, (o) => this.listTimers(o));
  }

  /**
   * getTimer returns the pending timer of run at step, whole (its payload
   * too, which a listing leaves out over 1 KiB), with its revision
   * (`wakeup.get`); NotFoundError when none is pending.
   */
  async getTimer(run: string, step: string): Promise<StoredTimer> {
    return this.call<StoredTimer>("wakeup.get", { run, step });
  }
}

/** pages iterates over a listing, fetching the next page when one ends. */
async function* pages<O extends { cursor?: string }, T>(options: O, page: (o: O) => Promise<Page<T>>): AsyncIterable<T> {
  let o = options;
  for (;;) {
    const p = await page(o);
    yield* p.items;
    if (!p.next_cursor) return;
    o = { ...o, cursor: p.next_cursor };
  }
}

function revision(verb: string, rev: number): number {
  if (!Number.isSafeInteger(rev) || rev < 1) throw invalid(verb, "if_revision", `${rev}: a revision is a whole number from 1`);
  return rev;
}

function time(verb: string, field: string, t: Date | string): string {
  if (typeof t === "string") return t;
  if (Number.isNaN(t.getTime())) throw invalid(verb, field, "an invalid Date");
  return t.toISOString();
}
