// How a stage asks the index which version of a document is current, so work on a deleted or
// superseded version is skipped before it starts (a restart otherwise redoes every version queued).
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { toDomainError } from "./error-mapping.ts";

/** The catalog's current version of the document (ms since the epoch), or undefined when it does not exist. */
export type CurrentVersion = (documentId: string) => Promise<bigint | undefined>;

export function documentVersionLookup(transport: () => Transport): CurrentVersion {
  let client: ReturnType<typeof createClient<typeof IndexService>> | undefined;
  return async (documentId) => {
    client ??= createClient(IndexService, transport());
    try {
      return (await client.getDocument({ documentId })).document?.version;
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
      throw toDomainError(error);
    }
  };
}

/** Why an event's version needs no work, or undefined when it is the current one (or newer). */
export async function staleVersion(current: CurrentVersion, documentId: string, version: bigint): Promise<string | undefined> {
  const now = await current(documentId);
  if (now === undefined) return "the document was deleted";
  if (now > version) return `version ${version} was superseded by ${now}`;
  return undefined;
}
