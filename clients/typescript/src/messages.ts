// The fire and wakeup messages as a worker reads them
// (docs/fire-messages.md, docs/timers.md), and the bodies it sends.

import type { MsgHdrs } from "@nats-io/transport-node";

/** Which stream a delivery came from. */
export type Kind = "fire" | "wakeup";

/** One delivery of a message, for onError. */
export interface Delivery {
  kind: Kind;
  /** The workflow: the subject's third token. */
  workflow: string;
  subject: string;
  /** Nats-Msg-Id: a fire's slot id, a wakeup's "wakeup.<run>.<step>.<due ms>"; "" for neither. */
  id: string;
  /** A fire's schedule ("" for a wakeup). */
  scheduleId: string;
  /** Deliveries of this message so far, from 1. */
  number: number;
  /** No further delivery is allowed (maxDeliver). */
  last: boolean;
}

/** One delivery of a schedule's fire. */
export interface Fire {
  /** The slot id "<schedule id>.<unix ms>": the idempotency key (a slot can arrive twice). */
  slotId: string;
  scheduleId: string;
  workflow: string;
  /** When the slot was due (Sched-Scheduled-At). */
  scheduledAt: Date;
  dispatchedAt: Date | undefined;
  /** "catchup", "trigger", "backfill", "moved", "takeover", or "" for a regular slot. */
  reason: string;
  note: string;
  /** A moved fire's nominal time. */
  nominalAt: Date | undefined;
  instance: string;
  subject: string;
  /** The schedule's input JSON, as bytes (empty when it has none). */
  input: Uint8Array;
  /** Deliveries so far, from 1. */
  delivery: number;
  headers: MsgHdrs;
  /** The input decoded (null when empty). */
  json<T = unknown>(): T | null;
}

/** One delivery of a timer. */
export interface Wakeup {
  /** "wakeup.<run>.<step>.<due ms>": the idempotency key. */
  id: string;
  run: string;
  step: string;
  workflow: string;
  dueAt: Date;
  dispatchedAt: Date | undefined;
  condition: string;
  conditionKey: string;
  /** The form it was registered with. */
  when: string;
  reason: string;
  rearms: number;
  payload: Uint8Array;
  delivery: number;
  headers: MsgHdrs;
  json<T = unknown>(): T | null;
}

/** The body of a completion report on sched.done.<workflow>.<schedule id>. */
export interface DoneReport {
  slot_id: string;
  outcome: "completed" | "failed" | "cancelled" | "started";
  error?: string;
  worker?: string;
}

/** The body of a cancel request on sched.cancel.<workflow>.<schedule id>. */
export interface CancelRequest {
  schedule: string;
  slot_id: string;
  by: string;
  at: string;
}

const decoder = new TextDecoder();

function decode<T>(data: Uint8Array): T | null {
  return data.length ? (JSON.parse(decoder.decode(data)) as T) : null;
}

function time(h: MsgHdrs, name: string, required: boolean): Date | undefined {
  const v = h.get(name);
  if (!v) {
    if (required) throw new Error(`header ${name} missing`);
    return undefined;
  }
  const t = new Date(v);
  if (Number.isNaN(t.getTime())) throw new Error(`header ${name} ${JSON.stringify(v)}: not an RFC 3339 time`);
  return t;
}

/** parseFire reads a fire message; it throws when the message is no fire. */
export function parseFire(subject: string, h: MsgHdrs | undefined, data: Uint8Array, delivery: number): Fire {
  if (!h) throw new Error("not a fire message: no headers");
  const slotId = h.get("Nats-Msg-Id");
  const scheduleId = h.get("Sched-Schedule-Id");
  if (!slotId || !scheduleId) throw new Error("not a fire message: missing Nats-Msg-Id or Sched-Schedule-Id header");
  return {
    slotId,
    scheduleId,
    workflow: h.get("Sched-Workflow"),
    scheduledAt: time(h, "Sched-Scheduled-At", true)!,
    dispatchedAt: time(h, "Sched-Dispatched-At", false),
    reason: h.get("Sched-Reason"),
    note: h.get("Sched-Note"),
    nominalAt: time(h, "Sched-Nominal-At", false),
    instance: h.get("Sched-Instance"),
    subject,
    input: data,
    delivery,
    headers: h,
    json: <T>() => decode<T>(data),
  };
}

/** parseWakeup reads a wakeup message; it throws when the message is no wakeup. */
export function parseWakeup(h: MsgHdrs | undefined, data: Uint8Array, delivery: number): Wakeup {
  if (!h) throw new Error("not a wakeup message: no headers");
  const id = h.get("Nats-Msg-Id");
  const run = h.get("Sched-Run");
  const step = h.get("Sched-Step");
  if (!id || !run || !step) throw new Error("not a wakeup message: missing Nats-Msg-Id, Sched-Run or Sched-Step");
  const rearms = h.get("Sched-Rearms");
  if (rearms && !/^\d+$/.test(rearms)) throw new Error(`header Sched-Rearms ${JSON.stringify(rearms)}: not a count`);
  return {
    id,
    run,
    step,
    workflow: h.get("Sched-Workflow"),
    dueAt: time(h, "Sched-Due-At", true)!,
    dispatchedAt: time(h, "Sched-Dispatched-At", false),
    condition: h.get("Sched-Condition"),
    conditionKey: h.get("Sched-Condition-Key"),
    when: h.get("Sched-When"),
    reason: h.get("Sched-Reason"),
    rearms: rearms ? Number(rearms) : 0,
    payload: data,
    delivery,
    headers: h,
    json: <T>() => decode<T>(data),
  };
}

/** subjectWorkflow is the third token of sched.fire.<workflow>.<id> or sched.wakeup.<workflow>. */
export function subjectWorkflow(subject: string): string {
  return subject.split(".")[2] ?? "";
}

/**
 * subjectToken makes s one subject token as the scheduler does: '.', '*',
 * '>', '%', spaces and control characters become %XX; "" becomes "%00".
 */
export function subjectToken(s: string): string {
  if (s === "") return "%00";
  const enc = new TextEncoder();
  const out: number[] = [];
  for (const b of enc.encode(s)) {
    if (b === 0x2e || b === 0x2a || b === 0x3e || b === 0x25 || b <= 0x20 || b === 0x7f) {
      out.push(...enc.encode("%" + b.toString(16).toUpperCase().padStart(2, "0")));
    } else {
      out.push(b);
    }
  }
  return new TextDecoder().decode(new Uint8Array(out));
}
