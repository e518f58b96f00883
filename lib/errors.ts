// Typed domain errors. Domain code throws these; the RPC edge (lib/rpc/error-mapping.ts) maps each
// to one Connect code, once.

/**
 * Why a call failed, for code to act on: the message is for people and may change, so a caller
 * (another service, a surface writing its own error shape) decides by the reason, never by the
 * words. Crosses services as a Connect error detail (lib/rpc/error-mapping.ts).
 */
export const ErrorReasons = {
  /** The query vector's length is not the base's: the base changed its embedding model meanwhile. */
  staleQueryVector: "STALE_QUERY_VECTOR",
  /** The call carried no API key where one is needed. */
  apiKeyMissing: "API_KEY_MISSING",
  /** The authorization header is not `Bearer <key>`. */
  apiKeyMalformed: "API_KEY_MALFORMED",
  /** A model a request named (an assistant, a kb: list, an embedding model) is not one it may use. */
  modelNotFound: "MODEL_NOT_FOUND",
} as const;

export type ErrorReason = (typeof ErrorReasons)[keyof typeof ErrorReasons];

export class QuarryError extends Error {
  /** One of ErrorReasons when code acts on this failure; undefined for most. */
  readonly reason?: string;

  constructor(message: string, options?: { cause?: unknown; reason?: string }) {
    super(message, options);
    this.name = new.target.name;
    if (options?.reason) this.reason = options.reason;
  }
}

/** Whether an error is a Quarry error with that reason. */
export function hasReason(error: unknown, reason: ErrorReason): boolean {
  return error instanceof QuarryError && error.reason === reason;
}

/** The caller sent something unusable (empty file, bad settings, oversize question). */
export class InvalidInputError extends QuarryError {}

/** The named thing does not exist. */
export class NotFoundError extends QuarryError {}

/** The thing already exists (duplicate knowledge base name). */
export class AlreadyExistsError extends QuarryError {}

/** The request is well formed but the system is not in a state to do it (unsupported format, dimension mismatch). */
export class FailedPreconditionError extends QuarryError {}

/** A backend (search engine, model endpoint, Tika) could not be reached; retrying later may work. */
export class UnavailableError extends QuarryError {}

/** The input exceeds a configured limit (upload size). */
export class TooLargeError extends QuarryError {}

/** The call carries no credentials, or credentials that match no key. */
export class UnauthenticatedError extends QuarryError {}

/** The caller is known, but its role or its knowledge bases do not allow this call. */
export class PermissionDeniedError extends QuarryError {}

/**
 * The caller went away (it cancelled its request, or its deadline passed) before the work was
 * done, so the work was dropped: nothing failed, and nobody is waiting for an answer.
 */
export class CancelledError extends QuarryError {}

/** CancelledError when the caller's signal has fired: checked before work a gone caller would waste. */
export function throwIfCancelled(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new CancelledError(`${what}: the caller cancelled the request`);
}

const ERRORS_BY_NAME: Record<string, new (message: string, options?: { reason?: string }) => QuarryError> = {
  InvalidInputError,
  NotFoundError,
  AlreadyExistsError,
  FailedPreconditionError,
  UnavailableError,
  TooLargeError,
  UnauthenticatedError,
  PermissionDeniedError,
  CancelledError,
};

/**
 * The typed error a worker thread reported by name and message (structured clone keeps neither a
 * class nor a custom name); an unknown name is the input's fault, as a thread only runs on input.
 */
export function errorFromThread(reported: { name: string; message: string; reason?: string }): QuarryError {
  // The reason travels too: a caller decides by it (a stale query vector is retried, say).
  return new (ERRORS_BY_NAME[reported.name] ?? InvalidInputError)(reported.message, reported.reason ? { reason: reported.reason } : undefined);
}
