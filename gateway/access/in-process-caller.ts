// The gateway's plain-HTTP routes authenticate their caller at their own door (gateway/http/) and
// then make the same QuarryService calls a Connect client makes, in process, so every access rule
// (role, scope, filtered listings) applies to them too. The caller travels in a header of that
// in-process transport: nothing arriving over the network is ever read this way, since the network
// listener's interceptor authenticates the `authorization` header and ignores this one.
import type { Transport } from "@connectrpc/connect";
import { UnauthenticatedError } from "../../lib/errors.ts";
import type { Principal } from "./principal.ts";

const CALLER_HEADER = "x-quarry-in-process-caller";

/** The in-process transport, with every call naming `who` as its caller. */
export function callingAs(transport: Transport, who: Principal): Transport {
  const value = JSON.stringify(who);
  const named = (header: HeadersInit | undefined) => {
    const headers = new Headers(header);
    headers.set(CALLER_HEADER, value);
    return headers;
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) => transport.unary(method, signal, timeoutMs, named(header), input, contextValues),
    stream: (method, signal, timeoutMs, header, input, contextValues) => transport.stream(method, signal, timeoutMs, named(header), input, contextValues),
  };
}

/** For the in-process transport's access interceptor: the caller callingAs named. */
export async function identifyInProcessCaller(request: { header: Headers }): Promise<Principal> {
  const value = request.header.get(CALLER_HEADER);
  // A route that skipped its door has no caller to name: refused, never served as anyone.
  if (!value) throw new UnauthenticatedError("this in-process call names no authenticated caller");
  return JSON.parse(value) as Principal;
}

