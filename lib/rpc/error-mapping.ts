// The one place where domain errors become Connect codes, and back again for callers of other
// services (a worker needs to know whether a failure is worth retrying).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorReasonSchema } from "../../gen/quarry/common/v1/error_reason_pb.ts";
import {
  AlreadyExistsError,
  CancelledError,
  FailedPreconditionError,
  InvalidInputError,
  NotFoundError,
  PermissionDeniedError,
  QuarryError,
  TooLargeError,
  UnauthenticatedError,
  UnavailableError,
} from "../errors.ts";

const toCode: [new (...args: never[]) => QuarryError, Code][] = [
  [InvalidInputError, Code.InvalidArgument],
  [NotFoundError, Code.NotFound],
  [AlreadyExistsError, Code.AlreadyExists],
  [FailedPreconditionError, Code.FailedPrecondition],
  [UnavailableError, Code.Unavailable],
  [TooLargeError, Code.ResourceExhausted],
  [UnauthenticatedError, Code.Unauthenticated],
  [PermissionDeniedError, Code.PermissionDenied],
  [CancelledError, Code.Canceled],
];

export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return withoutMetadata(error);
  for (const [type, code] of toCode) {
    if (!(error instanceof type)) continue;
    const details = error.reason ? [{ desc: ErrorReasonSchema, value: create(ErrorReasonSchema, { reason: error.reason }) }] : undefined;
    return new ConnectError(error.message, code, undefined, details, error);
  }
  // An abort that was not turned into a CancelledError on its way up (piscina's AbortError, the
  // DOMException of signal.throwIfAborted() or of a fetch): the caller went away, nothing broke.
  if (error instanceof Error && error.name === "AbortError") return new ConnectError("the request was cancelled", Code.Canceled, undefined, undefined, error);
  // An unexpected error: its message may carry internals, so the caller sees a generic one.
  return new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}

/**
 * A ConnectError relayed from another service's client carries that response's protocol headers
 * (content-type, grpc-status, ...) as its metadata, and @connectrpc/connect 2.1 writes an error's
 * metadata into the response: over gRPC the second content-type breaks the HTTP/2 stream and the
 * caller gets Internal instead of the real code. Quarry sets no metadata of its own on errors, so
 * the relay keeps the code, message and details only. (Connect 2.2 drops wire metadata itself,
 * but its Node package asks for Node 22.)
 */
function withoutMetadata(error: ConnectError): ConnectError {
  if ([...error.metadata.keys()].length === 0) return error;
  const relayed = new ConnectError(error.rawMessage, error.code, undefined, undefined, error.cause ?? error);
  relayed.details = error.details;
  return relayed;
}

/** Turns an error from another Quarry service's client back into the domain error it stood for. */
export function toDomainError(error: unknown): unknown {
  if (!(error instanceof ConnectError)) return error;
  const found = toCode.find(([, code]) => code === error.code);
  if (found) return new found[0](error.rawMessage as never, { cause: error, reason: reasonOf(error) } as never);
  if (error.code === Code.DeadlineExceeded || error.code === Code.Unknown) {
    return new UnavailableError(error.rawMessage, { cause: error });
  }
  return error;
}

/** The ErrorReason detail a Connect error carries, if any. */
export function reasonOf(error: ConnectError): string | undefined {
  return error.findDetails(ErrorReasonSchema)[0]?.reason || undefined;
}

/** Errors a later attempt may get past (a backend down); everything else is the input's fault. */
export function isRetryable(error: unknown): boolean {
  const domain = toDomainError(error);
  if (domain instanceof UnavailableError) return true;
  if (domain instanceof QuarryError) return false;
  if (domain instanceof ConnectError) return domain.code === Code.Internal || domain.code === Code.Aborted;
  return true;
}
