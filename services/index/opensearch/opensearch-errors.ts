// Translates OpenSearch client failures into domain errors once, for the search engine and the
// catalog: unreachable or overloaded → Unavailable; a missing index → NotFound; the rest keep the
// engine's reason in the message (never a silent empty result).
import { errors } from "@opensearch-project/opensearch";
import { NotFoundError, QuarryError, UnavailableError } from "../../../lib/errors.ts";

const UNAVAILABLE_STATUS = new Set([429, 502, 503, 504]);

export function isResponseError(error: unknown, statusCode?: number): error is InstanceType<typeof errors.ResponseError> {
  return error instanceof errors.ResponseError && (statusCode === undefined || error.statusCode === statusCode);
}

export function errorType(error: unknown): string | undefined {
  if (!(error instanceof errors.ResponseError)) return undefined;
  const body = error.body as { error?: { type?: string } } | undefined;
  return body?.error?.type;
}

export function isIndexNotFound(error: unknown): boolean {
  return isResponseError(error, 404) && (errorType(error) === "index_not_found_exception" || errorType(error) === undefined);
}

export function toDomainError(error: unknown, what: string): unknown {
  if (error instanceof QuarryError) return error;
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError ||
    error instanceof errors.RequestAbortedError
  ) {
    return new UnavailableError(`${what}: OpenSearch is unreachable (${error.message})`, { cause: error });
  }
  if (error instanceof errors.ResponseError) {
    if (UNAVAILABLE_STATUS.has(error.statusCode)) {
      return new UnavailableError(`${what}: OpenSearch answered ${error.statusCode} (${errorType(error) ?? "no reason"})`, { cause: error });
    }
    if (error.statusCode === 404 && errorType(error) === "index_not_found_exception") {
      return new NotFoundError(`${what}: index not found`, { cause: error });
    }
    const body = error.body as { error?: { reason?: string; root_cause?: { reason?: string }[] } } | undefined;
    const reason = body?.error?.root_cause?.[0]?.reason ?? body?.error?.reason ?? error.message;
    return new Error(`${what}: OpenSearch answered ${error.statusCode}: ${reason}`, { cause: error });
  }
  return error;
}

/** A failure inside an otherwise successful response (bulk item, msearch item). */
export function itemError(what: string, status: number | undefined, detail: unknown): Error {
  const reason = typeof detail === "object" && detail !== null ? JSON.stringify(detail) : String(detail);
  if (status !== undefined && UNAVAILABLE_STATUS.has(status)) return new UnavailableError(`${what}: OpenSearch answered ${status}: ${reason}`);
  return new Error(`${what}: OpenSearch answered ${status ?? "an error"}: ${reason}`);
}
