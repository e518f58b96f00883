// Whether this tab's key may change a knowledge base (an editor or an admin), so a panel can leave
// its actions out for a reader; GetCaller says the key's role, asked once per key. Anything else
// than an answer (a network error) counts as may-edit: the server still refuses what a key may not
// do, with its reason.
import { useEffect, useState } from "react";
import { ApiKeyRole } from "../../../gen/quarry/common/v1/api_key_pb.ts";
import { currentCaller } from "./caller.ts";

/** undefined until known; a key's role is the same on every base it may see. */
export function useCanEdit(_knowledgeBase: string): boolean | undefined {
  const { caller } = currentCaller();
  const [canEdit, setCanEdit] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let current = true;
    void caller.then((c) => current && setCanEdit(!c || c.openAccess || c.role === ApiKeyRole.EDITOR || c.role === ApiKeyRole.ADMIN));
    return () => {
      current = false;
    };
    // The promise is the key's, made once, so it changes only with the key.
  }, [caller]);
  return canEdit;
}
