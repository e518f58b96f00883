// OpenAI's error shape and status codes ({"error": {message, type, param, code}}), which every
// OpenAI client turns into its own typed errors (AuthenticationError on 401, NotFoundError on 404...).
import { ErrorReasons } from "../../../lib/errors.ts";
import type { FailureWriter, HttpFailure } from "../http-route.ts";
import { sendJson } from "../wire.ts";

const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  409: "conflict_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
};

/** The body OpenAI sends for a failure (also the `error` of a failed stream's last event). */
export function openAiError(failure: HttpFailure): { error: { message: string; type: string; param: string | null; code: string | null } } {
  const type = TYPES[failure.status] ?? (failure.status >= 500 ? "server_error" : "invalid_request_error");
  const unknownModel = failure.reason === ErrorReasons.modelNotFound;
  const code = failure.status === 401 ? "invalid_api_key" : unknownModel ? "model_not_found" : failure.code;
  return { error: { message: failure.message, type, param: unknownModel ? "model" : null, code } };
}

export const openAiFailure: FailureWriter = (res, failure) => sendJson(res, failure.status, openAiError(failure));
