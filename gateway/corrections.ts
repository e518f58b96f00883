// Managed corrections (docs/ANSWERS.md, "Managed corrections"): an operator's corrected answer to a
// turn becomes a document of the assistant's corrections knowledge base, uploaded through the same
// path as any other file, so it is parsed, chunked, embedded and indexed by the pipeline, with its
// progress, versions (correcting a turn again replaces its document) and delete. The answer service
// finds the base through the assistant (corrections_knowledge_base_id) and ranks a matching
// correction first. Works on the contracts' messages, like knowledge-bases.ts.
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { Assistant } from "../gen/quarry/common/v1/assistant_pb.ts";
import type { Document, KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import { CorrectionSchema, type Correction } from "../gen/quarry/gateway/v1/corrections_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { AlreadyExistsError, FailedPreconditionError, InvalidInputError, NotFoundError, PermissionDeniedError } from "../lib/errors.ts";
import { toDomainError } from "../lib/rpc/error-mapping.ts";
import { correctionDocumentText, CORRECTION_METADATA as META, questionWordings } from "../lib/correction-document.ts";

/** Longer answers belong in a document of a knowledge base, not a correction. */
export const MAX_CORRECTED_ANSWER_CHARS = 8_000;
export const MAX_CORRECTION_QUESTION_CHARS = 1_000;
export const MAX_CORRECTION_WORDINGS = 20;

export interface CorrectionPeers {
  index: Client<typeof IndexService>;
  /** Creates a knowledge base as CreateKnowledgeBase does (the embedder's model, the chunker's settings). */
  createKnowledgeBase(request: { name: string; description: string; embeddingModel: string }): Promise<KnowledgeBase | undefined>;
  /** Deletes a knowledge base (by id) as DeleteKnowledgeBase does, with its kept originals. */
  deleteKnowledgeBase(knowledgeBaseId: string): Promise<void>;
  /** Uploads a file as UploadDocument does. */
  upload(input: { knowledgeBase: string; fileName: string; mimeType: string; metadata: Record<string, string>; content: Uint8Array }): Promise<{ document?: Document }>;
}

export interface CorrectionRequest {
  turnId: string;
  correctedAnswer: string;
  question: string;
  /** The API key's name; empty when Quarry has no keys. */
  author: string;
}

export class Corrections {
  constructor(private readonly peers: CorrectionPeers) {}

  async correct(request: CorrectionRequest): Promise<Correction> {
    const turnId = request.turnId.trim();
    const answer = request.correctedAnswer.trim();
    if (!turnId) throw new InvalidInputError("name the turn to correct (its id, tn_…, as ChatStarted or GetConversation gave it)");
    if (!answer) throw new InvalidInputError("the corrected answer is empty");
    if (answer.length > MAX_CORRECTED_ANSWER_CHARS) {
      throw new InvalidInputError(`the corrected answer is ${answer.length} characters long; the limit is ${MAX_CORRECTED_ANSWER_CHARS.toLocaleString("en-US")} (upload longer text as a document instead)`);
    }
    const { index } = this.peers;
    const turn = (await index.getTurn({ turnId })).turn!;
    const assistantId = turn.provenance?.assistantId ?? "";
    if (!assistantId) {
      throw new FailedPreconditionError(
        `turn ${turnId} was answered from knowledge bases named in the request, not by an assistant: corrections belong to an assistant (they are kept in its corrections knowledge base); ask through an assistant and correct that turn`,
      );
    }
    const assistant = await this.assistantOf(assistantId, turnId);
    const questions = questionWordings(request.question.trim() || turn.provenance?.retrievalQuery || turn.question);
    if (questions.length > MAX_CORRECTION_WORDINGS) throw new InvalidInputError(`give at most ${MAX_CORRECTION_WORDINGS} wordings of the question, one per line; got ${questions.length}`);
    const long = questions.find((q) => q.length > MAX_CORRECTION_QUESTION_CHARS);
    if (long) throw new InvalidInputError(`a wording of the question is ${long.length} characters long; the limit is ${MAX_CORRECTION_QUESTION_CHARS.toLocaleString("en-US")}`);
    const base = await this.correctionsBase(assistant);
    const createdAt = new Date();
    const metadata = {
      [META.turnId]: turnId,
      [META.question]: questions.join("\n"),
      [META.originalQuestion]: turn.question,
      [META.answer]: answer,
      [META.author]: request.author,
      [META.createdAt]: createdAt.toISOString(),
      [META.assistantId]: assistant.id,
    };
    const uploaded = await this.peers.upload({
      knowledgeBase: base.id,
      // One document per turn: correcting a turn again is a new version of the same document.
      fileName: `correction-${turnId}.txt`,
      mimeType: "text/plain",
      metadata,
      content: new TextEncoder().encode(correctionDocumentText(questions, answer)),
    });
    return correctionOf(uploaded.document!)!;
  }

  /** An assistant's corrections, newest first; none before its first correction. */
  async list(assistantRef: string): Promise<Correction[]> {
    if (!assistantRef.trim()) throw new InvalidInputError("name the assistant whose corrections to list (its id or name)");
    const assistant = (await this.peers.index.getAssistant({ assistant: assistantRef.trim() })).assistant!;
    if (!assistant.correctionsKnowledgeBaseId) return [];
    let documents: Document[];
    try {
      documents = (await this.peers.index.listDocuments({ knowledgeBaseId: assistant.correctionsKnowledgeBaseId })).documents;
    } catch (error) {
      // The operator deleted the base: no corrections until the next one makes it again.
      if (toDomainError(error) instanceof NotFoundError) return [];
      throw error;
    }
    return documents
      .map(correctionOf)
      .filter((c): c is Correction => c !== undefined)
      .sort((a, b) => Number(b.document!.version - a.document!.version));
  }

  /** Deletes a correction's document; other documents are refused, so this cannot delete by accident. */
  async delete(correctionId: string): Promise<void> {
    const id = correctionId.trim();
    if (!id) throw new InvalidInputError("name the correction to delete (its id, as ListCorrections gives it)");
    const document = (await this.peers.index.getDocument({ documentId: id })).document!;
    const owners = await this.correctionsBases();
    if (!owners.has(document.knowledgeBaseId) || !correctionOf(document)) {
      throw new InvalidInputError(`document ${id} is not a correction; delete an ordinary document with DeleteDocument`);
    }
    await this.peers.index.deleteDocument({ documentId: id });
  }

  /**
   * Deletes an assistant with its corrections base, which is the assistant's own (made by its first
   * correction, named after it, read only through it): left behind it would be an orphan nobody
   * asked to keep. The base goes first, so a failure in between leaves the assistant without
   * corrections — the state deleting the base by hand leaves — and a retry finishes. A base another
   * assistant mounts (an operator's choice) is not the deleted one's alone: refused, not broken.
   * Returns the deleted base's id, or "" when it had none.
   */
  async deleteAssistant(assistantRef: string, caller: { scoped: boolean }): Promise<string> {
    const { index } = this.peers;
    const assistant = (await index.getAssistant({ assistant: assistantRef })).assistant!;
    const baseId = assistant.correctionsKnowledgeBaseId;
    let deleted = "";
    if (baseId) {
      if (caller.scoped) {
        throw new PermissionDeniedError(
          `the assistant ${assistant.name} has managed corrections, and deleting it deletes their knowledge base, which no key's scope covers: delete it with a key without a scope`,
        );
      }
      const { assistants } = await index.listAssistants({});
      const mounting = assistants.filter((a) => a.id !== assistant.id && a.knowledgeBases.some((m) => m.knowledgeBase === baseId));
      if (mounting.length > 0) {
        throw new FailedPreconditionError(
          `the corrections knowledge base of ${assistant.name} (${baseId}) is mounted by the assistant ${mounting.map((a) => a.name).join(", ")}; unmount it there (UpdateAssistant) before deleting ${assistant.name}`,
        );
      }
      try {
        await this.peers.deleteKnowledgeBase(baseId);
        deleted = baseId;
      } catch (error) {
        // Already deleted by hand: nothing is left to delete with the assistant.
        if (!(toDomainError(error) instanceof NotFoundError)) throw error;
      }
    }
    await index.deleteAssistant({ assistant: assistant.id });
    return deleted;
  }

  /** Corrections base id → its assistant's id, for marking bases in listings. */
  async correctionsBases(): Promise<Map<string, string>> {
    const { assistants } = await this.peers.index.listAssistants({});
    return new Map(assistants.filter((a) => a.correctionsKnowledgeBaseId).map((a) => [a.correctionsKnowledgeBaseId, a.id]));
  }

  private async assistantOf(assistantId: string, turnId: string): Promise<Assistant> {
    try {
      return (await this.peers.index.getAssistant({ assistant: assistantId })).assistant!;
    } catch (error) {
      if (toDomainError(error) instanceof NotFoundError) {
        throw new FailedPreconditionError(`the assistant that answered turn ${turnId} (${assistantId}) has been deleted; there is nothing left to correct`);
      }
      throw error;
    }
  }

  /**
   * The assistant's corrections base, made on its first correction (or again if an operator deleted
   * it). It embeds with the model of the assistant's first mounted base, so a correction is read the
   * way the assistant's documents are. Two first corrections at once both try the same name: the
   * loser finds the winner's base by name.
   */
  private async correctionsBase(assistant: Assistant): Promise<KnowledgeBase> {
    const { index } = this.peers;
    if (assistant.correctionsKnowledgeBaseId) {
      try {
        return (await index.getKnowledgeBase({ knowledgeBase: assistant.correctionsKnowledgeBaseId })).knowledgeBase!;
      } catch (error) {
        if (!(toDomainError(error) instanceof NotFoundError)) throw error;
      }
    }
    const first = assistant.knowledgeBases[0]?.knowledgeBase;
    const model = first ? (await index.getKnowledgeBase({ knowledgeBase: first })).knowledgeBase!.embeddingModel : "";
    const name = `${assistant.name} · corrections`;
    let base: KnowledgeBase;
    try {
      base = (await this.peers.createKnowledgeBase({
        name,
        description: `Managed corrections of the assistant ${assistant.name}: questions it answers from these first (CorrectAnswer, DeleteCorrection).`,
        embeddingModel: model,
      }))!;
    } catch (error) {
      if (!(toDomainError(error) instanceof AlreadyExistsError)) throw error;
      base = (await index.getKnowledgeBase({ knowledgeBase: name })).knowledgeBase!;
    }
    await index.updateAssistant({ assistant: assistant.id, update: { ...assistant, correctionsKnowledgeBaseId: base.id } });
    return base;
  }
}

/** The correction a document stands for; undefined for a document without the correction's metadata. */
export function correctionOf(document: Document): Correction | undefined {
  const m = document.metadata;
  if (!m[META.turnId]) return undefined;
  const at = m[META.createdAt] ? new Date(m[META.createdAt]) : document.createdAt ? timestampDate(document.createdAt) : new Date(0);
  return create(CorrectionSchema, {
    id: document.id,
    assistantId: m[META.assistantId] ?? "",
    knowledgeBaseId: document.knowledgeBaseId,
    turnId: m[META.turnId],
    question: m[META.question] ?? "",
    originalQuestion: m[META.originalQuestion] ?? "",
    correctedAnswer: m[META.answer] ?? "",
    author: m[META.author] ?? "",
    createdAt: timestampFromDate(Number.isNaN(at.getTime()) ? new Date(0) : at),
    document,
  });
}
