// The records and replies of the admin API, typed as they travel (JSON,
// snake_case): docs/records.md is the contract of the spec, docs/api.md of
// the replies. Times are RFC 3339 strings.

/** A JSON value (a spec's input, a timer's payload). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A schedule's spec, the value of its key in sched_specs (docs/records.md,
 * "Spec"). Exactly one recurrence: `cron`, `every`, `at` or `business_day`.
 */
export interface Spec {
  id?: string;
  workflow: string;
  cron?: string;
  dialect?: "standard" | "quartz";
  dom_dow?: "cronie" | "posix" | "and";
  dst_gap?: "natural" | "skip" | "shift";
  dst_overlap?: "natural" | "once" | "twice";
  every?: string;
  align?: "anchor" | "epoch";
  anchor?: string;
  phase?: string;
  at?: string;
  start?: string;
  end?: string;
  limit?: number;
  tz?: string;
  input?: Json;
  calendar?: string;
  calendar_inline?: Json;
  holiday_roll?: "skip" | "next_business_day" | "previous_business_day" | "modified_following" | "modified_preceding";
  business_hours_only?: boolean;
  business_day?: number;
  time?: string;
  misfire?: "skip" | "fire_once" | "fire_all";
  catchup_window?: string;
  misfire_threshold?: string;
  overlap?: "allow" | "skip" | "buffer_one" | "buffer_all" | "cancel_other";
  completion_timeout?: string;
  description?: string;
  static?: string;
  /** Fields a newer scheduler knows (jitter, labels, ...): passed through as they are. */
  [field: string]: unknown;
}

/** A schedule's state record (docs/records.md, "State"); `plan` and the counters are always there. */
export interface State {
  next?: string;
  next_nominal?: string;
  next_reason?: string;
  plan: string;
  fires: number;
  missed?: number;
  skipped?: number;
  ended?: boolean;
  paused?: { note?: string; at: string; until?: string };
  resumed_at?: string;
  skip_next?: number;
  backfill?: { from: string; to: string; rate: number; done?: number; total?: number; [field: string]: unknown };
  running?: { slot_id: string; slot: string; since: string; deadline: string };
  owner?: string;
  [field: string]: unknown;
}

/** A schedule as schedule.get and schedule.list show it. */
export interface ScheduleInfo {
  id: string;
  /** The spec's revision: the value `ifRevision` compares with. */
  revision: number;
  spec: Spec;
  /** Why the stored spec does not validate (the schedule does not fire). */
  invalid?: string;
  state?: State;
  /** `state` is the plan the schedulers keep in memory: the schedule has not fired yet. */
  planned?: boolean;
  last_status?: string;
  last_slot?: string;
  /** Spec fields a listing left out (larger than 1 KiB); `get` returns them. */
  omitted?: string[];
}

/** One page of a listing. */
export interface Page<T> {
  items: T[];
  /** Every record that matches the filters, on every page. */
  total: number;
  /** The cursor of the next page; absent on the last. */
  next_cursor?: string;
}

/**
 * What put and update did (or, with `dryRun`, would do): `created` (a new
 * id), `unchanged` (the stored spec is the same: nothing written,
 * `revision` the stored one), the spec as stored (with what the store fills
 * in: an every's `anchor`, a calendar's zone) and the fields changed.
 */
export interface PutResult {
  id: string;
  revision: number;
  created: boolean;
  unchanged: boolean;
  /** The write was only checked: nothing was written. */
  dry_run?: boolean;
  spec?: Spec;
  changes?: FieldChange[];
}

/** One changed field: `from` absent for a field added, `to` absent for one removed. */
export interface FieldChange {
  field: string;
  from?: unknown;
  to?: unknown;
}

/** What update did: a PutResult with the spec and the changes. */
export interface UpdateResult extends PutResult {
  spec: Spec;
  changes: FieldChange[];
}

/** A row of the status listing. */
export interface StatusRow {
  id: string;
  workflow: string;
  state: string;
  next?: string;
  last_slot?: string;
  last_status?: string;
  fires: number;
  missed: number;
  paused?: string;
  running?: string;
  shard: number;
  owner?: string;
  invalid?: string;
  [field: string]: unknown;
}

/** The reply of status: a summary of every schedule and a page of rows. */
export interface StatusPage extends Page<StatusRow> {
  summary: {
    schedules: number;
    active: number;
    paused: number;
    ended: number;
    invalid: number;
    planned: number;
    timers: number;
    shards: number;
    instances?: Record<string, number>;
  };
}

/** A timer to register (wakeup.add; docs/timers.md): one of `when`, `whenExpr`, `at`. */
export interface TimerRequest {
  run: string;
  step: string;
  workflow: string;
  /** A relative or clock form: "30s", "2 hours", "48 whours", "02:00", "2026-12-31". */
  when?: string;
  /** An expression over the payload and now, evaluated once at registration. */
  whenExpr?: string;
  at?: Date | string;
  zone?: string;
  calendar?: string;
  payload?: Json;
  condition?: string;
  /** "BUCKET/KEY": the timer is dropped as stale unless the key holds `condition` at fire time. */
  conditionKey?: string;
  /** A duration ("10m"): the timer is dropped when not delivered that long after it was due. */
  expireAfter?: string;
}

/** A pending timer, as the sched_wakeups record holds it (docs/timers.md). */
export interface Timer {
  run: string;
  step: string;
  workflow: string;
  due: string;
  when?: string;
  zone?: string;
  calendar?: string;
  when_expr?: string;
  payload?: Json;
  condition?: string;
  condition_key?: string;
  expires_at?: string;
  created: string;
  rearms?: number;
  [field: string]: unknown;
}

/** A timer in a listing: its key ("<run>.<step>") and record. */
export interface TimerInfo extends Timer {
  key: string;
  omitted?: string[];
  invalid?: string;
}

/** A pending timer as getTimer reads it: whole, with its revision in sched_wakeups. */
export interface StoredTimer extends TimerInfo {
  revision: number;
}

/** What addTimer stored. */
export interface TimerResult {
  key: string;
  revision: number;
  timer: Timer;
}
