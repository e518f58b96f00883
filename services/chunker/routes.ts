import { fromBinary } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { ChunkDocumentResponseSchema, ChunkerService, PreviewChunksResponseSchema } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import type { ChunkingSettings as ChunkingSettingsProto } from "../../gen/quarry/common/v1/common_pb.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { chunkingFromProto, chunkingToProto, parsedFromProto } from "../../lib/proto-convert.ts";
import type { ChunkingSettings } from "../../lib/domain.ts";
import { defaultChunkingSettings, maxChunkTokens, validateChunkingSettings } from "./chunk-document.ts";
import type { ChunkingThreads } from "./chunking-threads.ts";
import { DEFAULT_PARENT_MAX_TOKENS } from "./parent-spans.ts";
import type { ModelTokens } from "./model-tokens.ts";

export interface ChunkerDeps {
  /** The default embedding model's tokenizer folder. */
  tokenizerDir: string;
  /** The default embedding model's input limit, special tokens included. */
  maxInputTokens: number;
  /** Another model's tokenizer and limit, for requests that name one. */
  tokensFor?(model: string): Promise<ModelTokens>;
  /** Most chunks one document may become; unlimited when absent. */
  maxChunks?: number;
  /** Where splitting runs: never on the thread that answers calls. */
  threads: ChunkingThreads;
}

/** The tokenizer and limit of the request's model, or the default's. */
async function tokensOf(deps: ChunkerDeps, model: string): Promise<ModelTokens> {
  return model && deps.tokensFor ? deps.tokensFor(model) : { tokenizerDir: deps.tokenizerDir, maxInputTokens: deps.maxInputTokens };
}

/** Unset fields take the defaults; the result is validated against the model's limit. */
export function resolveSettings(deps: Pick<ModelTokens, "maxInputTokens">, proto: ChunkingSettingsProto | undefined): ChunkingSettings {
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
        const settings = resolveSettings(tokens, request.settings);
        const task = { kind: "chunks", parsed: parsedFromProto(request.document), settings, tokens, maxChunks: deps.maxChunks, documentId: request.documentId, knowledgeBaseId: request.knowledgeBaseId } as const;
        return fromBinary(ChunkDocumentResponseSchema, await deps.threads.run(task, request.documentId || "the document"));
      },
      async previewChunks(request) {
        if (!request.document) throw new InvalidInputError("document is required");
        const tokens = await tokensOf(deps, request.embeddingModel);
        const settings = resolveSettings(tokens, request.settings);
        const task = { kind: "preview", parsed: parsedFromProto(request.document), settings, tokens, maxChunks: deps.maxChunks, shown: request.maxChunks || 50 } as const;
        return fromBinary(PreviewChunksResponseSchema, await deps.threads.run(task, "the previewed document"));
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
