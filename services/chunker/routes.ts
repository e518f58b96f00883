import type { ConnectRouter } from "@connectrpc/connect";
import { ChunkerService } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import type { ChunkingSettings as ChunkingSettingsProto } from "../../gen/quarry/common/v1/common_pb.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { chunkingFromProto, chunkingToProto, chunkToProto, parsedFromProto } from "../../lib/proto-convert.ts";
import type { ChunkingSettings } from "../../lib/domain.ts";
import { chunkDocument, defaultChunkingSettings, maxChunkTokens, validateChunkingSettings } from "./chunk-document.ts";
import { toChunks } from "./chunk-id.ts";
import type { TokenCounter } from "./tokenizer.ts";

export interface ChunkerDeps {
  counter: TokenCounter;
  /** The embedding model's input limit, special tokens included. */
  maxInputTokens: number;
  /** Most chunks one document may become; unlimited when absent. */
  maxChunks?: number;
}

/** Unset fields take the defaults; the result is validated against the model's limit. */
export function resolveSettings(deps: ChunkerDeps, proto: ChunkingSettingsProto | undefined): ChunkingSettings {
  const settings = { ...defaultChunkingSettings(deps.maxInputTokens), ...chunkingFromProto(proto) };
  validateChunkingSettings(settings, deps.maxInputTokens);
  return settings;
}

export function chunkerRoutes(deps: ChunkerDeps) {
  const limits = { maxInputTokens: deps.maxInputTokens, maxChunks: deps.maxChunks };
  return (router: ConnectRouter) =>
    router.service(ChunkerService, {
      chunkDocument(request) {
        if (!request.document) throw new InvalidInputError("document is required");
        const drafts = chunkDocument(parsedFromProto(request.document), resolveSettings(deps, request.settings), deps.counter, limits);
        return { chunks: toChunks(drafts, request.documentId, request.knowledgeBaseId).map(chunkToProto) };
      },
      previewChunks(request) {
        if (!request.document) throw new InvalidInputError("document is required");
        const drafts = chunkDocument(parsedFromProto(request.document), resolveSettings(deps, request.settings), deps.counter, limits);
        const shown = drafts.slice(0, request.maxChunks || 50);
        return {
          chunks: toChunks(shown, "preview", "").map(chunkToProto),
          totalChunks: drafts.length,
          totalTokens: drafts.reduce((sum, d) => sum + d.tokenCount, 0),
        };
      },
      resolveChunkingSettings(request) {
        return {
          settings: chunkingToProto(resolveSettings(deps, request.settings)),
          maxChunkTokens: maxChunkTokens(deps.maxInputTokens),
        };
      },
    });
}
