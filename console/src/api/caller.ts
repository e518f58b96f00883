// Who this tab's key is (GetCaller), asked once per key and shared by every panel that needs to
// know: its role (can-edit.ts) and where trace ids link to (trace-link.tsx). undefined when the
// gateway did not answer; each user decides what that means for it.
import type { GetCallerResponse } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { quarry } from "./client.ts";
import { sessionKey } from "./session-key.ts";

const known = new Map<string, Promise<GetCallerResponse | undefined>>();

/** The same promise for as long as the key stays the same, so it can be an effect's dependency. */
export function currentCaller(): { caller: Promise<GetCallerResponse | undefined> } {
  const key = sessionKey() ?? "";
  let caller = known.get(key);
  if (!caller) known.set(key, (caller = quarry.getCaller({}).catch(() => undefined)));
  return { caller };
}
