// Whether this tab's key may change a knowledge base (an editor or an admin), so a panel can leave
// its actions out for a reader. No RPC tells a key its role, so it is found out without changing
// anything: with no key, a call that got through was served by a Quarry that has no keys yet, where
// everyone is an admin; with one, an AddSource that names no source is sent once per key — the
// access rules refuse it to a reader (PERMISSION_DENIED) before the handler refuses it for being
// empty (INVALID_ARGUMENT). Anything else (a network error) counts as may-edit: the server still
// refuses what a key may not do, with its reason. A call that tells the caller its role replaces this.
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "react";
import { quarry } from "./client.ts";
import { sessionKey } from "./session-key.ts";

const known = new Map<string, Promise<boolean>>();

function probe(knowledgeBase: string): Promise<boolean> {
  return quarry.addSource({ knowledgeBase }).then(
    () => true,
    (error: unknown) => ConnectError.from(error).code !== Code.PermissionDenied,
  );
}

/** undefined until known; a key's role is the same on every base it may see. */
export function useCanEdit(knowledgeBase: string): boolean | undefined {
  const key = sessionKey();
  const [canEdit, setCanEdit] = useState<boolean | undefined>(key ? undefined : true);
  useEffect(() => {
    if (!key) return setCanEdit(true);
    let current = true;
    let answer = known.get(key);
    if (!answer) known.set(key, (answer = probe(knowledgeBase)));
    void answer.then((value) => current && setCanEdit(value));
    return () => {
      current = false;
    };
  }, [key, knowledgeBase]);
  return canEdit;
}
