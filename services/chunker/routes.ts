import type { ConnectRouter } from "@connectrpc/connect";
import { ChunkerService } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import type { ChunkingSettings as ChunkingSettingsProto } from "../../gen/quarry/common/v1/common_pb.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { chunkingFromProto, chunkingToProto, chunkToProto, parsedFromProto } from "../../lib/proto-convert.ts";
import type { ChunkingSettings } from "../../lib/domain.ts";
import { chunkDocument, defaultChunkingSettings, maxChunkTokens, validateChunkingSettings } from "./chunk-document.ts";
import { toChunks } from "./chunk-id.ts";
import { documentVectorText } from "./document-vector.ts";
import { previewParents } from "./preview-parents.ts";
import { DEFAULT_PARENT_MAX_TOKENS } from "./parent-spans.ts";
import type { ModelTokens } from "./model-tokens.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";

export interface ChunkerDeps {
  /** The default embedding model's tokenizer. */
  counter: TokenCounter;
  /** The default embedding model's input limit, special tokens included. */
  maxInputTokens: number;
  /** Another model's tokenizer and limit, for requests that name one. */
  tokensFor?(model: string): Promise<ModelTokens>;
  /** Most chunks one document may become; unlimited when absent. */
  maxChunks?: number;
}

/** The tokenizer and limit of the request's model, or the default's. */
async function tokensOf(deps: ChunkerDeps, model: string): Promise<ModelTokens> {
  return model && deps.tokensFor ? deps.tokensFor(model) : { counter: deps.counter, maxInputTokens: deps.maxInputTokens };
}

/** Unset fields take the defaults; the result is validated against the model's limit. */
export function resolveSettings(deps: ModelTokens, proto: ChunkingSettingsProto | undefined): ChunkingSettings {
  const settings: ChunkingSettings = { ...defaultChunkingSettings(deps.maxInputTokens), ...chunkingFromProto(proto) };
  // A parent mode without a size takes the default, stored with the base so it never drifts.
  if (settings.parent && settings.parent !== "none") settings.parentMaxTokens ??= DEFAULT_PARENT_MAX_TOKENS;
  validateChunkingSettings(settings, deps.maxInputTokens);
  return settings;
}

export function chunkerRoutes(deps: ChunkerDeps) {
  return (router: ConnectRouter) =>
    router.service(ChunkerService, {
      async chunkDocument(request) {
        if (!request.document) throw new InvalidInputError("document is required");
        const tokens = await tokensOf(deps, request.embeddingModel);
        const drafts = chunkDocument(parsedFromProto(request.document), resolveSettings(tokens, request.settings), tokens.counter, { maxInputTokens: tokens.maxInputTokens, maxChunks: deps.maxChunks });
        return { chunks: toChunks(drafts, request.documentId, request.knowledgeBaseId).map(chunkToProto) };
      },
      async previewChunks(request) {
        if (!request.document) throw new InvalidInputError("document is required");
        const tokens = await tokensOf(deps, request.embeddingModel);
        const settings = resolveSettings(tokens, request.settings);
        const drafts = chunkDocument(parsedFromProto(request.document), settings, tokens.counter, { maxInputTokens: tokens.maxInputTokens, maxChunks: deps.maxChunks });
        const shown = drafts.slice(0, request.maxChunks || 50);
        return {
          chunks: toChunks(shown, "preview", "").map(chunkToProto),
          parents: previewParents(request.document.text, shown),
          totalChunks: drafts.length,
          totalTokens: drafts.reduce((sum, d) => sum + d.tokenCount, 0),
          documentVector: documentVectorText(settings, drafts, tokens.counter, tokens.maxInputTokens) !== "",
        };
      },
      async resolveChunkingSettings(request) {
        const tokens = await tokensOf(deps, request.embeddingModel);
        return {
          settings: chunkingToProto(resolveSettings(tokens, request.settings)),
          maxChunkTokens: maxChunkTokens(tokens.maxInputTokens),
        };
      },
    });
}
