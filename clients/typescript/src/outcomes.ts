// What a handler throws steers the delivery, as in pkg/worker:
//
//   returns             ack; completion report "completed"
//   retry(err, after)   nak: redelivered after `after` ms
//   permanent(err)      term: never redelivered; reported "failed"
//   anything else       nak with the worker's backoff for that delivery
//
// On the last allowed delivery (maxDeliver) a failure dead-letters the
// message (a copy on sched.event.dead_letter.<workflow>.<id>) and reports
// it "failed". A handler whose signal a cancel request aborted
// (CancelRequestedError) has its fire terminated and reported "cancelled";
// one a stop aborted (StoppedError) has its message handed back (nak) for
// another instance, unless that was its last delivery. A handler whose
// timeout ran out (HandlerTimeoutError) failed.

/** Asks for the message again after `after` milliseconds. Throw one made by retry. */
export class RetryError extends Error {
  readonly after: number;
  constructor(cause: unknown, after: number) {
    super(`retry in ${after}ms: ${messageOf(cause)}`, { cause });
    this.name = "RetryError";
    this.after = after;
  }
}

/** Gives up on the message: terminated, not redelivered, reported failed. Throw one made by permanent. */
export class PermanentError extends Error {
  constructor(cause: unknown) {
    super(`permanent: ${messageOf(cause)}`, { cause });
    this.name = "PermanentError";
  }
}

/** retry asks for the message again after `afterMs` milliseconds: `throw retry(err, 5000)`. */
export function retry(err: unknown, afterMs: number): RetryError {
  if (!Number.isFinite(afterMs) || afterMs < 0) throw new RangeError(`worker: retry(err, ${afterMs}): the delay must be 0 or more milliseconds`);
  return new RetryError(err ?? new Error("not ready"), afterMs);
}

/** permanent gives up on the message: `throw permanent(err)`. */
export function permanent(err: unknown): PermanentError {
  return new PermanentError(err ?? new Error("permanent failure"));
}

/** The reason of a handler's signal when a scheduler asked to cancel its slot (overlap cancel_other). */
export class CancelRequestedError extends Error {
  /** The slot that replaces the cancelled one. */
  readonly by: string;
  constructor(by: string) {
    super(`worker: cancel requested by the scheduler: slot ${by} replaces it`);
    this.name = "CancelRequestedError";
    this.by = by;
  }
}

/** The reason of a handler's signal when stop({ cancel: true }) ended it. */
export class StoppedError extends Error {
  constructor() {
    super("worker: stopped");
    this.name = "StoppedError";
  }
}

/** The reason of a handler's signal when it ran longer than its timeout. */
export class HandlerTimeoutError extends Error {
  constructor(ms: number) {
    super(`worker: handler timeout (${ms}ms)`);
    this.name = "HandlerTimeoutError";
  }
}

/** A failure to tell the server or the schedulers how a delivery went. */
export class SettleError extends Error {
  /** "ack", "nak", "term", "in_progress", "report", "dead_letter" or "fetch". */
  readonly op: string;
  constructor(op: string, cause: unknown) {
    super(`worker: ${op}: ${messageOf(cause)}`, { cause });
    this.name = "SettleError";
    this.op = op;
  }
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
