// The one line a person reads when a command fails. Each kind of failure is told apart by its type
// or its code, never by its wording; an error of no known kind is a bug, and keeps its stack.
import { Code, ConnectError } from "@connectrpc/connect";
import { ConfigError } from "../lib/config.ts";
import { QuarryError } from "../lib/errors.ts";
import { GatewayUnreachableError } from "../client/gateway-client.ts";

/** A mistake in what the person typed (a path that does not exist, a folder with nothing to ingest). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export function reportLine(error: unknown): string {
  // The client wraps what an interceptor throws in a ConnectError; the cause is the explanation.
  if (error instanceof ConnectError && error.cause instanceof GatewayUnreachableError) return error.cause.message;
  if (error instanceof ConnectError) return `${error.rawMessage} (${codeName(error.code)})`;
  // Configuration, usage and domain errors are written for people already.
  if (error instanceof ConfigError || error instanceof UsageError || error instanceof GatewayUnreachableError || error instanceof QuarryError) {
    return error.message;
  }
  const listen = listenFailure(error);
  if (listen) return listen;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** "not_found", as gRPC tools print codes. */
export function codeName(code: Code): string {
  const name = Code[code];
  return name ? name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() : String(code);
}

/** A server that could not bind its port (`quarry serve`). */
function listenFailure(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (!(error instanceof Error) || e.syscall !== "listen") return undefined;
  const where = `${e.address ?? "?"}:${e.port ?? "?"}`;
  switch (e.code) {
    case "EADDRINUSE":
      return `port ${e.port} is already in use on ${e.address}; stop what holds it or choose another with --port`;
    case "EACCES":
      return `not allowed to listen on ${where}; ports below 1024 need privileges, choose another with --port`;
    case "EADDRNOTAVAIL":
      return `${e.address} is not an address of this machine; choose another with --host`;
    default:
      return undefined;
  }
}
