// Export and import of a knowledge base (docs/PORTABILITY.md): the index writes and reads the
// archive; the gateway relays its bytes, and turns the browser's one-message import into the
// index's stream.
import { create } from "@bufbuild/protobuf";
import type { Client, HandlerContext } from "@connectrpc/connect";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { ImportKnowledgeBaseRequestSchema as IndexImportSchema, type ImportKnowledgeBaseResponse as IndexImportResponse } from "../gen/quarry/index/v1/portability_pb.ts";
import type { ImportKnowledgeBaseStreamRequest, ImportOptions } from "../gen/quarry/gateway/v1/portability_pb.ts";
import { InvalidInputError, PermissionDeniedError } from "../lib/errors.ts";
import { optionsThenData } from "../lib/stream-head.ts";
import { isScoped, PRINCIPAL } from "./access/principal.ts";

/** Bytes per message when a whole archive is passed on (well under any message limit). */
const PIECE_BYTES = 1024 * 1024;

export function portabilityHandlers(index: Client<typeof IndexService>) {
  const importArchive = async (options: ImportOptions | undefined, data: AsyncIterable<Uint8Array>) => {
    async function* requests() {
      yield create(IndexImportSchema, { part: { case: "options", value: { name: options?.name ?? "" } } });
      for await (const piece of data) yield create(IndexImportSchema, { part: { case: "data", value: piece } });
    }
    return summary(await index.importKnowledgeBase(requests()));
  };
  return {
    async *exportKnowledgeBase(request: { knowledgeBase: string; withoutVectors: boolean; withAssistants: boolean }, context: HandlerContext) {
      const principal = context.values.get(PRINCIPAL);
      // Assistants mount other bases and keep their corrections in a base of their own, which no
      // key's scope covers (as for DeleteAssistant): only a key without a scope exports them.
      if (request.withAssistants && principal && isScoped(principal)) {
        throw new PermissionDeniedError(`the API key "${principal.name}" is limited to knowledge bases, and assistants reach beyond them: export with assistants using a key without a scope`);
      }
      const { knowledgeBase, withoutVectors, withAssistants } = request;
      for await (const piece of index.exportKnowledgeBase({ knowledgeBase, withoutVectors, withAssistants })) yield { data: piece.data };
    },
    importKnowledgeBase(request: { options?: ImportOptions; archive: Uint8Array }) {
      if (request.archive.byteLength === 0) throw new InvalidInputError("the import has no archive");
      return importArchive(request.options, pieces(request.archive));
    },
    async importKnowledgeBaseStream(requests: AsyncIterable<ImportKnowledgeBaseStreamRequest>) {
      const { options, data } = await optionsThenData(requests, "an import");
      return importArchive(options, data);
    },
  };
}

async function* pieces(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) yield bytes.subarray(at, at + PIECE_BYTES);
}

function summary(response: IndexImportResponse) {
  const { knowledgeBase, documents, chunks, reembedded, assistants, corrections, notes } = response;
  return { knowledgeBase, documents, chunks, reembedded, assistants, corrections, notes };
}
