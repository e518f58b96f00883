// For routes tests: what a call ended with, as the name of its Connect code ("NotFound",
// "InvalidArgument", …) or "succeeded", so one expectation names the outcome.
import { Code, ConnectError } from "@connectrpc/connect";

export function codeOf(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => "succeeded",
    (error: unknown) => Code[ConnectError.from(error).code],
  );
}
