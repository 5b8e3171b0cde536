// settle decides how a delivery ends from what its handler did and why its
// signal aborted, in pkg/worker's order (outcomes.ts has the rules).

import type { Delivery } from "./messages.js";
import { CancelRequestedError, HandlerTimeoutError, PermanentError, RetryError } from "./outcomes.js";

/** The ways to settle one delivery, bound to its message. */
export interface Settler {
  /** ack, then report "completed". */
  ack(): void;
  /** term, report "cancelled". */
  cancelled(reason: CancelRequestedError): void;
  /** term, report "failed". */
  permanent(err: PermanentError): void;
  /** nak for another instance once fetching has stopped; no report. */
  handBack(): Promise<void>;
  /** publish the dead letter, term, report "failed". */
  deadLetter(err: unknown): void;
  /** nak with a delay. */
  nak(err: unknown, afterMs: number): void;
}

/** The handler's result. */
export type Outcome = { ok: true } | { ok: false; err: unknown };

/** settle ends the delivery d by the handler's outcome and its signal's abort reason. */
export async function settle(s: Settler, d: Delivery, outcome: Outcome, signal: AbortSignal, backoff: number[]): Promise<void> {
  if (outcome.ok) return s.ack();
  const err = outcome.err;
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof CancelRequestedError) return s.cancelled(reason);
  if (err instanceof PermanentError) return s.permanent(err);
  if (signal.aborted && !(reason instanceof HandlerTimeoutError) && !d.last) return s.handBack();
  if (d.last) return s.deadLetter(err);
  if (err instanceof RetryError) return s.nak(err, err.after);
  return s.nak(err, backoff[Math.min(d.number, backoff.length) - 1] ?? 0);
}
