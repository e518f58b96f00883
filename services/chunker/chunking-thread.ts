// The worker-thread side of ChunkingThreads: splitting, and encoding the result, for one document.
// Both are pure CPU work that grows with the document (a 10 MB one-line file takes half a minute),
// so they run here, away from the thread that answers calls and renews bus leases. Errors come back
// by name and message (errorFromThread rebuilds them), since structured clone keeps no class.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ChunkDocumentResponseSchema, PreviewChunksResponseSchema } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import { ChunksCreatedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import type { ChunkDraft, ChunkingSettings, ParsedDocument } from "../../lib/domain.ts";
import { InvalidInputError, QuarryError } from "../../lib/errors.ts";
import { chunkToProto, parsedFromProto } from "../../lib/proto-convert.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument } from "./chunk-document.ts";
import { toChunks } from "./chunk-id.ts";
import { documentVectorText } from "./document-vector.ts";
import type { ModelTokens } from "./model-tokens.ts";
import { previewParents } from "./preview-parents.ts";

interface Settings {
  settings: ChunkingSettings;
  tokens: ModelTokens;
  maxChunks?: number;
}

export type ChunkingTask =
  /**
   * A chunks.created event's whole payload, from the whole documents.parsed event, encoded: decoding
   * a large document's text is the thread's work too, never the main thread's.
   */
  | (Settings & { kind: "event"; documentParsed: Uint8Array; documentId: string; knowledgeBaseId: string; version: bigint; fileName: string })
  /** A ChunkDocumentResponse. */
  | (Settings & { kind: "chunks"; parsed: ParsedDocument; documentId: string; knowledgeBaseId: string })
  /** A PreviewChunksResponse showing the first `shown` chunks. */
  | (Settings & { kind: "preview"; parsed: ParsedDocument; shown: number });

export type ChunkingResult = { bytes: Uint8Array } | { error: { name: string; message: string } };

const counters = new Map<string, WordPieceTokenCounter>();

function counterFor(dir: string): WordPieceTokenCounter {
  let counter = counters.get(dir);
  if (!counter) counters.set(dir, (counter = WordPieceTokenCounter.fromModelDir(dir)));
  return counter;
}

function encode(task: ChunkingTask, parsed: ParsedDocument, drafts: ChunkDraft[], counter: WordPieceTokenCounter): Uint8Array {
  const { maxInputTokens } = task.tokens;
  switch (task.kind) {
    case "event":
      if (drafts.length === 0) throw new InvalidInputError("the document has no text to index");
      return toBinary(
        ChunksCreatedSchema,
        create(ChunksCreatedSchema, {
          documentId: task.documentId,
          knowledgeBaseId: task.knowledgeBaseId,
          version: task.version,
          fileName: task.fileName,
          chunks: toChunks(drafts, task.documentId, task.knowledgeBaseId).map(chunkToProto),
          documentText: documentVectorText(task.settings, drafts, counter, maxInputTokens),
        }),
      );
    case "chunks":
      return toBinary(ChunkDocumentResponseSchema, create(ChunkDocumentResponseSchema, { chunks: toChunks(drafts, task.documentId, task.knowledgeBaseId).map(chunkToProto) }));
    case "preview": {
      const shown = drafts.slice(0, task.shown);
      return toBinary(
        PreviewChunksResponseSchema,
        create(PreviewChunksResponseSchema, {
          chunks: toChunks(shown, "preview", "").map(chunkToProto),
          parents: previewParents(parsed.text, shown),
          totalChunks: drafts.length,
          totalTokens: drafts.reduce((sum, d) => sum + d.tokenCount, 0),
          documentVector: documentVectorText(task.settings, drafts, counter, maxInputTokens) !== "",
        }),
      );
    }
  }
}

function parsedOfEvent(encoded: Uint8Array): ParsedDocument {
  const event = fromBinary(DocumentParsedSchema, encoded);
  if (!event.parsed) throw new InvalidInputError("documents.parsed event without a parsed document");
  return parsedFromProto(event.parsed);
}

/** Piscina calls this once per task. */
export default function chunkInThread(task: ChunkingTask): ChunkingResult {
  try {
    const counter = counterFor(task.tokens.tokenizerDir);
    const parsed = task.kind === "event" ? parsedOfEvent(task.documentParsed) : task.parsed;
    const drafts = chunkDocument(parsed, task.settings, counter, { maxInputTokens: task.tokens.maxInputTokens, maxChunks: task.maxChunks });
    return { bytes: encode(task, parsed, drafts, counter) };
  } catch (error) {
    const reported = error instanceof QuarryError ? error : new InvalidInputError(`the document could not be split into chunks: ${(error as Error)?.message ?? String(error)}`);
    return { error: { name: reported.name, message: reported.message } };
  }
}
