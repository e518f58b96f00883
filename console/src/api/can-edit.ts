// Whether this tab's key may change a knowledge base (an editor or an admin), so a panel can leave
// its actions out for a reader; GetCaller says the key's role, asked once per key. Anything else
// than an answer (a network error) counts as may-edit: the server still refuses what a key may not
// do, with its reason.
import { useEffect, useState } from "react";
import { ApiKeyRole } from "../../../gen/quarry/common/v1/api_key_pb.ts";
import { quarry } from "./client.ts";
import { sessionKey } from "./session-key.ts";

const known = new Map<string, Promise<boolean>>();

function ask(): Promise<boolean> {
  return quarry.getCaller({}).then(
    (caller) => caller.openAccess || caller.role === ApiKeyRole.EDITOR || caller.role === ApiKeyRole.ADMIN,
    () => true,
  );
}

/** undefined until known; a key's role is the same on every base it may see. */
export function useCanEdit(_knowledgeBase: string): boolean | undefined {
  const key = sessionKey() ?? "";
  const [canEdit, setCanEdit] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let current = true;
    let answer = known.get(key);
    if (!answer) known.set(key, (answer = ask()));
    void answer.then((value) => current && setCanEdit(value));
    return () => {
      current = false;
    };
  }, [key]);
  return canEdit;
}
