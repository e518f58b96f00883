// How other services read a knowledge base's settings: through the index service's client, cached
// briefly because every event of a document asks for the same one. A caller that must see the
// settings as they were when a document was submitted (the chunker: UpdateKnowledgeBase may have
// changed them just before a re-ingest) passes the submission time, and a copy read before it is
// read again.
import { createClient, type Transport } from "@connectrpc/connect";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { KnowledgeBase } from "../domain.ts";
import { toDomainError } from "./error-mapping.ts";
import { knowledgeBaseFromProto } from "../proto-convert.ts";

export function knowledgeBaseLookup(transport: () => Transport, ttlMs = 10_000): (id: string, readAfterMs?: number) => Promise<KnowledgeBase> {
  const cache = new Map<string, { kb: KnowledgeBase; at: number }>();
  let client: ReturnType<typeof createClient<typeof IndexService>> | undefined;
  return async (id, readAfterMs = 0) => {
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < ttlMs && hit.at > readAfterMs) return hit.kb;
    client ??= createClient(IndexService, transport());
    try {
      const kb = knowledgeBaseFromProto((await client.getKnowledgeBase({ knowledgeBase: id })).knowledgeBase!);
      cache.set(id, { kb, at: Date.now() });
      return kb;
    } catch (error) {
      throw toDomainError(error);
    }
  };
}
