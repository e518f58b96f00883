import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { FailedPreconditionError, InvalidInputError, QuarryError, UnavailableError } from "./errors.ts";

/**
 * Translates an error from the `openai` client into Quarry's typed errors, keeping the provider's
 * own message (it names the bad parameter or the missing model, which is what the user needs).
 * `what` says which endpoint failed, e.g. "embedding endpoint http://host/v1".
 *
 * - unreachable, timed out, 5xx, 429 → UnavailableError (retrying later may work)
 * - 401, 403, 404 → FailedPreconditionError (a wrong key, a model the endpoint lacks: configuration, not the request)
 * - any other 4xx → InvalidInputError (the provider refused this input)
 */
export function mapOpenAiError(err: unknown, what: string): unknown {
  if (err instanceof QuarryError) return err;
  if (err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionError) {
    return new UnavailableError(`${what} is unreachable: ${err.message}`, { cause: err });
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const message = `${what} answered ${status}: ${providerMessage(err)}`;
    if (status >= 500 || status === 429 || status === 0) return new UnavailableError(message, { cause: err });
    if (status === 401 || status === 403 || status === 404) return new FailedPreconditionError(message, { cause: err });
    return new InvalidInputError(message, { cause: err });
  }
  return err;
}

function providerMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (body && typeof body.message === "string" && body.message) return body.message;
  return err.message;
}
