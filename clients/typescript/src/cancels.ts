// Cancel requests (overlap policy cancel_other) reach every instance of a
// worker. The one running the slot aborts its handler; the others remember
// the slot for an hour (the default completion timeout; at most 4096
// slots), so that a delivery of it that comes later is terminated and
// reported cancelled without running, as pkg/worker does.

import { CancelRequestedError } from "./outcomes.js";

const rememberMs = 60 * 60 * 1000;
const rememberMax = 4096;

/** Cancels knows the fires running in a worker and the slots cancelled lately. */
export class Cancels {
  readonly #running = new Map<string, Set<AbortController>>();
  readonly #recent = new Map<string, { reason: CancelRequestedError; at: number }>(); // insertion order: oldest first

  /** running records a running fire's controller until the returned function is called. */
  running(slot: string, c: AbortController): () => void {
    let set = this.#running.get(slot);
    if (!set) this.#running.set(slot, (set = new Set()));
    set.add(c);
    return () => {
      set.delete(c);
      if (set.size === 0 && this.#running.get(slot) === set) this.#running.delete(slot);
    };
  }

  /** cancel aborts the handlers running slot, or remembers the slot; it says whether one ran here. */
  cancel(slot: string, by: string): boolean {
    const reason = new CancelRequestedError(by);
    const set = this.#running.get(slot);
    if (set && set.size > 0) {
      for (const c of set) c.abort(reason);
      return true;
    }
    const now = Date.now();
    this.#recent.delete(slot);
    this.#recent.set(slot, { reason, at: now });
    for (const [k, v] of this.#recent) {
      if (this.#recent.size <= rememberMax && now - v.at < rememberMs) break;
      this.#recent.delete(k);
    }
    return false;
  }

  /** cancelled is the reason a slot was cancelled lately, if it was. */
  cancelled(slot: string): CancelRequestedError | undefined {
    const r = this.#recent.get(slot);
    return r && Date.now() - r.at < rememberMs ? r.reason : undefined;
  }
}
