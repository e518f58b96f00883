// The one client of Quarry's public API: the generated QuarryService over Connect-Web, on the
// origin that served the console (the gateway), with the session's key as a bearer token.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { QuarryService } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { announceAuthRequired } from "./auth-required.ts";
import { sessionKey } from "./session-key.ts";

const bearer: Interceptor = (next) => async (request) => {
  const key = sessionKey();
  if (key) request.header.set("authorization", `Bearer ${key}`);
  try {
    return await next(request);
  } catch (error) {
    const e = ConnectError.from(error);
    if (e.code === Code.Unauthenticated) announceAuthRequired(e.rawMessage);
    throw error;
  }
};

export const quarry = createClient(QuarryService, createConnectTransport({ baseUrl: window.location.origin, interceptors: [bearer] }));

/** Whether the gateway offers an RPC: screens built on RPCs another release adds check this. */
export function offers(method: string): boolean {
  return method in QuarryService.method;
}
