import { ConnectError } from "@connectrpc/connect";

/** The message a person reads: the server's own words, without the "[code]" prefix. */
export function describeError(error: unknown): string {
  if (error instanceof DOMException && error.name === "AbortError") return "cancelled";
  const e = ConnectError.from(error);
  return e.rawMessage || e.message;
}

export function isAbort(error: unknown): boolean {
  return (error instanceof DOMException && error.name === "AbortError") || (error instanceof ConnectError && error.code === 1);
}
