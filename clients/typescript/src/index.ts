// @jetsched/client: jetsched for TypeScript services. Client registers and
// operates schedules and timers through the admin API (docs/api.md);
// Worker consumes fires and wakeups with pkg/worker's contract
// (docs/workers.md).

export { Client } from "./client.js";
export type { CancelOutcome, ClientOptions, ListOptions, PutOptions, TimerListOptions, UpdateOptions } from "./client.js";
export {
  apiError,
  AuditUnavailableError,
  Codes,
  ConflictError,
  InvalidError,
  JetschedError,
  NoSchedulerError,
  NotFoundError,
  StaticError,
  UnavailableError,
} from "./errors.js";
export type { Code, ErrorBody } from "./errors.js";
export type * from "./types.js";
export { Worker } from "./worker.js";
export type { FireHandler, HandlerOptions, WakeupHandler, WorkerOptions } from "./worker.js";
export type { CancelRequest, Delivery, DoneReport, Fire, Kind, Wakeup } from "./messages.js";
export {
  CancelRequestedError,
  HandlerTimeoutError,
  permanent,
  PermanentError,
  retry,
  RetryError,
  SettleError,
  StoppedError,
} from "./outcomes.js";
