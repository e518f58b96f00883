// Translates a search-engine client's failures into domain errors once, for the engines whose
// clients share the same error classes by name (@opensearch-project/opensearch and
// @elastic/elasticsearch both derive from the old elasticsearch-js transport): unreachable or
// overloaded → Unavailable; a missing index → NotFound; the rest keep the engine's reason in the
// message (never a silent empty result).
import { NotFoundError, QuarryError, UnavailableError } from "../../../lib/errors.ts";

type ErrorClass = abstract new (...args: never[]) => Error;

export interface EngineErrorClasses<R extends Error & { statusCode?: number; body?: unknown }> {
  ResponseError: abstract new (...args: never[]) => R;
  ConnectionError: ErrorClass;
  TimeoutError: ErrorClass;
  NoLivingConnectionsError: ErrorClass;
  RequestAbortedError: ErrorClass;
}

const UNAVAILABLE_STATUS = new Set([429, 502, 503, 504]);

export interface EngineErrors<R> {
  isResponseError(error: unknown, statusCode?: number): error is R;
  /** The engine's error type (e.g. index_not_found_exception) of a response error. */
  errorType(error: unknown): string | undefined;
  isIndexNotFound(error: unknown): boolean;
  toDomainError(error: unknown, what: string): unknown;
  /** A failure inside an otherwise successful response (bulk item, msearch item). */
  itemError(what: string, status: number | undefined, detail: unknown): Error;
}

export function engineErrors<R extends Error & { statusCode?: number; body?: unknown }>(engine: string, classes: EngineErrorClasses<R>): EngineErrors<R> {
  const isResponseError = (error: unknown, statusCode?: number): error is R =>
    error instanceof classes.ResponseError && (statusCode === undefined || error.statusCode === statusCode);
  const errorType = (error: unknown): string | undefined =>
    isResponseError(error) ? (error.body as { error?: { type?: string } } | undefined)?.error?.type : undefined;
  return {
    isResponseError,
    errorType,
    isIndexNotFound: (error) => isResponseError(error, 404) && (errorType(error) === "index_not_found_exception" || errorType(error) === undefined),
    toDomainError(error, what) {
      if (error instanceof QuarryError) return error;
      if (
        error instanceof classes.ConnectionError ||
        error instanceof classes.TimeoutError ||
        error instanceof classes.NoLivingConnectionsError ||
        error instanceof classes.RequestAbortedError
      ) {
        return new UnavailableError(`${what}: ${engine} is unreachable (${error.message})`, { cause: error });
      }
      if (isResponseError(error)) {
        const status = error.statusCode ?? 0;
        if (UNAVAILABLE_STATUS.has(status)) {
          return new UnavailableError(`${what}: ${engine} answered ${status} (${errorType(error) ?? "no reason"})`, { cause: error });
        }
        if (status === 404 && errorType(error) === "index_not_found_exception") return new NotFoundError(`${what}: index not found`, { cause: error });
        const body = error.body as { error?: { reason?: string; root_cause?: { reason?: string }[] } } | undefined;
        const reason = body?.error?.root_cause?.[0]?.reason ?? body?.error?.reason ?? error.message;
        return new Error(`${what}: ${engine} answered ${status}: ${reason}`, { cause: error });
      }
      return error;
    },
    itemError(what, status, detail) {
      const reason = typeof detail === "object" && detail !== null ? JSON.stringify(detail) : String(detail);
      if (status !== undefined && UNAVAILABLE_STATUS.has(status)) return new UnavailableError(`${what}: ${engine} answered ${status}: ${reason}`);
      return new Error(`${what}: ${engine} answered ${status ?? "an error"}: ${reason}`);
    },
  };
}
