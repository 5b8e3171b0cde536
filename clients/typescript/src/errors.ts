// Errors of the admin API (docs/api.md, "Errors"): every error reply
// carries a code, a message written for users and, for invalid input, the
// field. Each code has its class, so that callers can test with
// `instanceof` (or read `code`).

/** The error codes of the admin API (docs/api.md). */
export const Codes = {
  invalid: "invalid",
  notFound: "not_found",
  conflict: "conflict",
  inUse: "in_use",
  static: "static",
  notWritten: "not_written",
  unavailable: "unavailable",
  auditUnavailable: "audit_unavailable",
  internal: "internal",
} as const;

/** One of the admin API's error codes, or a code a newer scheduler added. */
export type Code = (typeof Codes)[keyof typeof Codes] | (string & {});

/** The body of an error reply. */
export interface ErrorBody {
  code: string;
  field?: string;
  message: string;
}

/**
 * An error reply of the admin API: `code`, `field` (for `invalid`), the
 * message, and the verb that answered it. Subclasses name the codes a
 * caller acts on.
 */
export class JetschedError extends Error {
  /** The API's code: "invalid", "not_found", "conflict", ... */
  readonly code: Code;
  /** For `invalid`: the JSON field at fault ("cron", "id", "if_revision", ...). */
  readonly field: string | undefined;
  /** The verb that answered, without the prefix: "schedule.create", ... */
  readonly verb: string;

  constructor(verb: string, body: ErrorBody) {
    super(body.message || body.code);
    this.name = new.target.name;
    this.code = body.code;
    this.field = body.field;
    this.verb = verb;
  }
}

/** `invalid`: the request or a spec field is wrong; `field` names it. */
export class InvalidError extends JetschedError {
  declare readonly field: string | undefined;
}

/** `not_found`: no such schedule, calendar, timer or backfill (or verb). */
export class NotFoundError extends JetschedError {}

/** `conflict`: a stale `ifRevision`, or a create-only put of an id that exists. Nothing was written. */
export class ConflictError extends JetschedError {}

/** `static`: a put or removal of a static schedule; the message names the file that declares it. */
export class StaticError extends JetschedError {}

/** `unavailable`: the scheduler's listing catalogue is still loading; retry. */
export class UnavailableError extends JetschedError {}

/** `audit_unavailable`: the audit trail did not take the change's intent; nothing changed; retry. */
export class AuditUnavailableError extends JetschedError {}

const classes: Record<string, new (verb: string, body: ErrorBody) => JetschedError> = {
  [Codes.invalid]: InvalidError,
  [Codes.notFound]: NotFoundError,
  [Codes.conflict]: ConflictError,
  [Codes.static]: StaticError,
  [Codes.unavailable]: UnavailableError,
  [Codes.auditUnavailable]: AuditUnavailableError,
};

/** apiError makes the error of a reply's body: the class of its code. */
export function apiError(verb: string, body: ErrorBody): JetschedError {
  const C = classes[body.code] ?? JetschedError;
  return new C(verb, body);
}

/**
 * invalid is an InvalidError raised by the client itself, before any
 * request: a bad argument, named by its JSON field.
 */
export function invalid(verb: string, field: string, message: string): InvalidError {
  return new InvalidError(verb, { code: Codes.invalid, field, message: `invalid ${field}: ${message}` });
}

/** No scheduler answered on the subject: none runs, or the connection lacks the rights on `sched.api.>`. */
export class NoSchedulerError extends Error {
  readonly subject: string;
  constructor(subject: string, options?: ErrorOptions) {
    super(`no scheduler answers on ${subject} (the admin API needs a running \`scheduler run\`)`, options);
    this.name = "NoSchedulerError";
    this.subject = subject;
  }
}
