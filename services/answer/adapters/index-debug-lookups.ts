// The retrieval debugger's look-ups (debug/debug-lookups.ts) over the index service's RPCs.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { chunkFromProto, documentFromProto } from "../../../lib/proto-convert.ts";
import type { DebugLookups } from "../debug/debug-lookups.ts";
import { domainErrors } from "./index-retriever.ts";

export function indexDebugLookups(index: Client<typeof IndexService>): DebugLookups {
  return {
    getTurn: (id) => domainErrors(async () => (await index.getTurn({ turnId: id })).turn!),
    findChunks: (request) =>
      domainErrors(async () => {
        const res = await index.findChunks(request);
        return {
          chunks: res.chunks.map((c) => ({ chunk: chunkFromProto(c.chunk!), fileName: c.fileName, enabled: c.enabled, exact: c.exact })),
          matched: res.matched,
          scanned: Number(res.scanned),
          complete: res.complete,
        };
      }),
    getChunks: (ids) => domainErrors(async () => (await index.getChunks({ chunkIds: ids })).chunks.map(chunkFromProto)),
    findDocument: (id) =>
      domainErrors(async () => {
        try {
          return documentFromProto((await index.getDocument({ documentId: id })).document!);
        } catch (error) {
          if (ConnectError.from(error).code === Code.NotFound) return undefined;
          throw error;
        }
      }),
  };
}
