// The public API. Thin on purpose: it checks uploads, relays to the services (through
// knowledge-bases.ts where a call takes more than one), and streams. No retrieval or chunking
// logic lives here.
import { create } from "@bufbuild/protobuf";
import type { Client, ConnectRouter } from "@connectrpc/connect";
import { AnswerService } from "../gen/quarry/answer/v1/answer_pb.ts";
import { ChunkerService } from "../gen/quarry/chunker/v1/chunker_pb.ts";
import { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { ParserService } from "../gen/quarry/parser/v1/parser_pb.ts";
import { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import type { KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import { QuarryService, type DocumentHeader } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { BlobStore } from "../lib/blobs/blob-store.ts";
import type { EventBus } from "../lib/bus/event-bus.ts";
import { FailedPreconditionError, InvalidInputError, TooLargeError } from "../lib/errors.ts";
import { deadLetterToProto, systemStatus, type SystemStatusDeps } from "./status/system-status.ts";
import type { ProgressHub } from "../lib/pipeline/progress-hub.ts";
import { toProtoStatus } from "../lib/pipeline/progress.ts";
import { documentFromProto, documentToProto } from "../lib/proto-convert.ts";
import { apiKeyHandlers } from "./api-key-routes.ts";
import { chunkNeighbours } from "./chunk-routes.ts";
import { ChunkEditing } from "./chunk-edit-routes.ts";
import { authorName, isScoped, OPEN_ACCESS, PRINCIPAL } from "./access/principal.ts";
import { roleToProto } from "../lib/auth/api-key-convert.ts";
import { conversationHandlers } from "./conversation-routes.ts";
import { Corrections } from "./corrections.ts";
import { KnowledgeBases } from "./knowledge-bases.ts";
import { Originals } from "./originals.ts";
import { StagePayloads } from "../lib/pipeline/stage-payloads.ts";
import { portabilityHandlers } from "./portability-routes.ts";
import { Reingest } from "./reingest.ts";
import { READING_RULE_HEAD_BYTES, submitDocument, type UploadInput, type UploadLimits } from "./upload.ts";
import { watchIngestion } from "./watch-ingestion.ts";
import { watchModelChange } from "./watch-model-change.ts";
import { sourceHandlers, sourcesFor } from "./source-routes.ts";
import { listEmbeddingModels } from "./embedding-model-routes.ts";
import type { Sources } from "./sources/sources.ts";

export interface GatewayDeps {
  index: Client<typeof IndexService>;
  chunker: Client<typeof ChunkerService>;
  parser: Client<typeof ParserService>;
  embedder: Client<typeof EmbedderService>;
  answer: Client<typeof AnswerService>;
  bus: EventBus;
  hub: ProgressHub;
  limits: UploadLimits;
  /** Originals and large uploads: the shared folder, or S3 (lib/blobs/). */
  blobs: BlobStore;
  /** Called after a key was created or revoked (the authenticator's cache). */
  keysChanged?: () => void;
  /** Handed the sources the routes sync, for the schedule (main.ts) to run them on their intervals. */
  onSources?: (sources: Sources) => void;
  /** What GetSystemStatus reads and RedriveDeadLetters acts on. */
  status?: SystemStatusDeps;
}

export function gatewayRoutes(deps: GatewayDeps) {
  const { index, answer } = deps;
  const knowledgeBases = new KnowledgeBases(deps);
  const originals = new Originals(deps.blobs);
  // The stages' large outputs (lib/pipeline/stage-payloads.ts) go with the originals.
  const payloads = new StagePayloads(deps.blobs);
  const chunkEdits = new ChunkEditing(deps);

  const upload = async (header: Pick<DocumentHeader, "knowledgeBase" | "fileName" | "mimeType" | "metadata"> | undefined, content: Uint8Array) => {
    if (!header) throw new InvalidInputError("the upload needs a header (knowledge base and file name)");
    return submit({
      knowledgeBase: header.knowledgeBase,
      fileName: header.fileName,
      mimeType: header.mimeType,
      metadata: { ...header.metadata },
      content,
    });
  };
  const submit = async (input: UploadInput) => {
    const result = await submitDocument(
      {
        bus: deps.bus,
        limits: deps.limits,
        blobs: deps.blobs,
        resolveKnowledgeBase: (kb) => knowledgeBases.get(kb),
        register: async (r) => {
          const res = await index.registerDocument({ ...r, sizeBytes: BigInt(r.sizeBytes), version: BigInt(r.version) });
          return { document: documentFromProto(res.document!), unchanged: res.unchanged };
        },
        keepOriginal: (kb, doc, bytes) => originals.save(kb, doc, bytes),
        // The one rule for what Quarry reads is the parser's (it knows which parsers are registered).
        checkReadable: async (fileName, mimeType, content) => {
          await deps.parser.checkReadable({ fileName, mimeType, head: content.subarray(0, READING_RULE_HEAD_BYTES), size: BigInt(content.byteLength) });
        },
      },
      input,
    );
    return { document: documentToProto(result.document), unchanged: result.unchanged };
  };
  const reingest = new Reingest({ index, originals, submit });

  const deleteDocument = async (documentId: string) => {
    const { document } = await index.getDocument({ documentId });
    await index.deleteDocument({ documentId });
    await originals.remove(document!.knowledgeBaseId, document!.id);
    await payloads.dropDocument(document!.knowledgeBaseId, document!.id);
  };
  const sources = sourcesFor({ index, resolveKnowledgeBase: (kb) => knowledgeBases.get(kb), submit, deleteDocument });
  deps.onSources?.(sources);

  const deleteKnowledgeBase = async (knowledgeBase: string) => {
    const id = await knowledgeBases.delete(knowledgeBase);
    await originals.removeKnowledgeBase(id);
    await payloads.dropKnowledgeBase(id);
  };
  const corrections = new Corrections({
    index,
    createKnowledgeBase: (r) => knowledgeBases.create(r),
    deleteKnowledgeBase,
    upload: (input) => upload(input, input.content),
  });
  // Marks the bases that hold an assistant's corrections, which Quarry made and manages.
  const marked = async (kbs: KnowledgeBase[]) => {
    const owners = await corrections.correctionsBases();
    for (const kb of kbs) kb.correctionsForAssistantId = owners.get(kb.id) ?? "";
    return kbs;
  };

  const statusDeps = () => {
    if (!deps.status) throw new FailedPreconditionError("this gateway was assembled without its status view");
    return deps.status;
  };

  return (router: ConnectRouter) =>
    router.service(QuarryService, {
      ...apiKeyHandlers(index, deps.keysChanged ?? (() => {})),
      ...conversationHandlers(index),
      ...sourceHandlers(sources),
      async correctAnswer(request, context) {
        const correction = await corrections.correct({ ...request, author: authorName(context.values.get(PRINCIPAL)) });
        return { correction };
      },
      async deleteAssistant(request, context) {
        const principal = context.values.get(PRINCIPAL);
        return { correctionsKnowledgeBaseId: await corrections.deleteAssistant(request.assistant, { scoped: principal ? isScoped(principal) : false }) };
      },
      async listCorrections(request) {
        return { corrections: await corrections.list(request.assistant) };
      },
      async deleteCorrection(request) {
        await corrections.delete(request.correctionId);
        return {};
      },
      async createKnowledgeBase(request) {
        return { knowledgeBase: await knowledgeBases.create(request) };
      },
      async getKnowledgeBase(request) {
        return { knowledgeBase: (await marked([await knowledgeBases.get(request.knowledgeBase)]))[0] };
      },
      async listKnowledgeBases() {
        return { knowledgeBases: await marked((await index.listKnowledgeBases({})).knowledgeBases) };
      },
      async changeEmbeddingModel(request) {
        return { knowledgeBase: await knowledgeBases.changeEmbeddingModel(request.knowledgeBase, request.embeddingModel) };
      },
      async *watchModelChange(request, context) {
        const kb = await knowledgeBases.get(request.knowledgeBase);
        yield* watchModelChange({ read: () => knowledgeBases.get(kb.id), signal: context.signal });
      },
      async updateKnowledgeBase(request) {
        return { knowledgeBase: await knowledgeBases.update(request) };
      },
      async reingestKnowledgeBase(request) {
        const kb = await knowledgeBases.get(request.knowledgeBase);
        return reingest.knowledgeBase(kb.id);
      },
      async deleteKnowledgeBase(request) {
        await deleteKnowledgeBase(request.knowledgeBase);
        return {};
      },
      ...portabilityHandlers(index),
      uploadDocument: (request) => upload(request.header, request.content),
      async uploadDocumentStream(requests) {
        let header: DocumentHeader | undefined;
        const parts: Uint8Array[] = [];
        let size = 0;
        for await (const part of requests) {
          if (part.part.case === "header") {
            if (header) throw new InvalidInputError("the header must be sent once, first");
            header = part.part.value;
          } else if (part.part.case === "content") {
            if (!header) throw new InvalidInputError("send the header before the content");
            size += part.part.value.byteLength;
            if (size > deps.limits.maxUploadBytes) {
              throw new TooLargeError(`${header.fileName} exceeds the upload limit of ${deps.limits.maxUploadBytes} bytes`);
            }
            parts.push(part.part.value);
          }
        }
        return upload(header, Buffer.concat(parts));
      },
      async getDocument(request) {
        return { document: (await index.getDocument({ documentId: request.documentId })).document };
      },
      async listDocuments(request) {
        return { documents: await knowledgeBases.listDocuments(request.knowledgeBase) };
      },
      async setDocumentEnabled(request) {
        return { document: (await index.setDocumentEnabled({ documentId: request.documentId, enabled: request.enabled })).document };
      },
      async deleteDocument(request) {
        await deleteDocument(request.documentId);
        return {};
      },
      getChunkNeighbours: (request) => chunkNeighbours(index, request),
      async listDocumentChunks(request) {
        const { document, chunks, total } = await chunkEdits.list(request);
        return { document, chunks, total };
      },
      editChunk: async (request) => ({ chunk: (await chunkEdits.edit(request)).chunk }),
      setChunkEnabled: async (request) => ({ chunk: (await chunkEdits.setEnabled(request)).chunk }),
      addChunk: async (request) => ({ chunk: (await chunkEdits.add(request)).chunk }),
      async reingestDocument(request) {
        return { document: await reingest.document(request.documentId) };
      },
      async *watchIngestion(request, context) {
        const ids = [...request.documentIds];
        if (ids.length === 0 && !request.knowledgeBase) throw new InvalidInputError("name documents or a knowledge base to watch");
        const kb = ids.length === 0 ? await knowledgeBases.get(request.knowledgeBase) : undefined;
        const snapshot = async () =>
          kb
            ? (await index.listDocuments({ knowledgeBaseId: kb.id })).documents.map(documentFromProto)
            : await Promise.all(ids.map(async (id) => documentFromProto((await index.getDocument({ documentId: id })).document!)));
        for await (const update of watchIngestion({ hub: deps.hub, snapshot, followNew: false, knowledgeBaseId: kb?.id, signal: context.signal })) {
          yield { ...update, status: toProtoStatus(update.status) };
        }
      },
      previewChunks: (request) => knowledgeBases.previewChunks(request),
      async listReadableFormats() {
        return { formats: (await deps.parser.listReadableFormats({})).formats };
      },
      listEmbeddingModels: () => listEmbeddingModels(deps.embedder),
      getCaller(_request, context) {
        const caller = context.values.get(PRINCIPAL) ?? OPEN_ACCESS;
        const open = caller === OPEN_ACCESS;
        return {
          name: open ? "" : caller.name,
          role: roleToProto(caller.role),
          knowledgeBaseIds: caller.knowledgeBaseIds,
          openAccess: open,
          traceViewerUrl: deps.status?.traceViewerUrl ?? "",
        };
      },
      async search(request, context) {
        const started = performance.now();
        // The signal goes along: a caller that resets its stream stops the retrieval behind it.
        const res = await answer.retrieve({ query: request.query, knowledgeBaseIds: request.knowledgeBases, settings: request.settings }, { signal: context.signal });
        return { hits: res.hits, tookMs: performance.now() - started, notes: res.notes };
      },
      async *chat(request, context) {
        const stream = answer.chat(
          {
            question: request.question,
            knowledgeBaseIds: request.knowledgeBases,
            settings: request.settings,
            conversationId: request.conversationId,
            assistant: request.assistant,
            history: request.history,
            oneOff: request.oneOff,
          },
          { signal: context.signal },
        );
        for await (const event of stream) yield { event };
      },
      async getSystemStatus() {
        return systemStatus(statusDeps());
      },
      async redriveDeadLetters(request) {
        return { redriven: (await statusDeps().deadLetters.redrive({ ids: [...request.ids], all: request.all })).map(deadLetterToProto) };
      },
      async debugRetrieval(request, context) {
        const res = await answer.debugRetrieval({
          turnId: request.turnId,
          query: request.query,
          knowledgeBaseIds: request.knowledgeBases,
          assistant: request.assistant,
          settings: request.settings,
          expect: request.expect,
          deepWindow: request.deepWindow,
        }, { signal: context.signal });
        return { report: res.report };
      },
    });
}
