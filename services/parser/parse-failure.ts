// Parsing is a pure function of the bytes: an exception no parser anticipated (pdf.js's "Illegal
// character", a stack overflow on absurd nesting) would happen again on every retry, so it is the
// input's fault and the document fails at once with the reason. Only typed errors pass through
// as they are: an UnavailableError (Tika down) is the one failure a retry can fix.
import { InvalidInputError, QuarryError } from "../../lib/errors.ts";

const MAX_REASON_CHARS = 300;

export function asParseFailure(error: unknown, fileName: string): QuarryError {
  if (error instanceof QuarryError) return error;
  // A library's error (V8's): its message is all it tells.
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new InvalidInputError(`${fileName} could not be parsed: its structure is nested too deeply`, { cause: error });
  }
  const message = (error as Error)?.message ?? String(error);
  const reason = message.length > MAX_REASON_CHARS ? `${message.slice(0, MAX_REASON_CHARS)}…` : message;
  return new InvalidInputError(`${fileName} could not be parsed: ${reason}`, { cause: error });
}
