// Who may call what on the public API: one rule per QuarryService method, so a method without a
// rule does not compile (and access-rules.test.ts checks the table against the service descriptor
// at run time). A rule names the least role and, for keys limited to knowledge bases, what the
// request touches: every knowledge base, chunk and document it names must be in the key's scope
// (scope.ts answers one that is not as if it did not exist).
import type { MessageShape } from "@bufbuild/protobuf";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { ApiKeyRole } from "../../lib/auth/api-key.ts";
import type { Targets } from "./scope.ts";

type Methods = typeof QuarryService.method;
export type MethodName = keyof Methods;

export type { Targets };

export interface AccessRule<M extends MethodName = MethodName> {
  role: ApiKeyRole;
  /**
   * For a key limited to knowledge bases: "check" the request's targets, "deny" the call outright
   * (it would reach beyond any scope), or "filter" the response down to the scope.
   */
  scoped: "check" | "deny" | "filter";
  targets?: (request: MessageShape<Methods[M]["input"]>) => Targets;
  filter?: (response: MessageShape<Methods[M]["output"]>, allowed: ReadonlySet<string>) => void;
}

const kb = (name: string): Targets => ({ knowledgeBases: [name] });
const present = (value: string) => (value ? [value] : []);
const doc = (id: string): Targets => ({ documents: [id] });

export const ACCESS_RULES: { [M in MethodName]: AccessRule<M> } = {
  // A scoped key could not see a base it created, and no key's scope can grow: only unscoped editors create.
  createKnowledgeBase: { role: "editor", scoped: "deny" },
  getKnowledgeBase: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  listKnowledgeBases: {
    role: "reader",
    scoped: "filter",
    filter: (res, allowed) => {
      res.knowledgeBases = res.knowledgeBases.filter((k) => allowed.has(k.id));
    },
  },
  deleteKnowledgeBase: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  changeEmbeddingModel: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  watchModelChange: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  // A new name is an unscoped key's choice (scope.ts: "taken" would reveal a base out of scope).
  updateKnowledgeBase: {
    role: "editor",
    scoped: "check",
    targets: (r) => ({ ...kb(r.knowledgeBase), renames: r.name === undefined ? undefined : { kind: "knowledgeBases", of: r.knowledgeBase, to: r.name } }),
  },
  reingestKnowledgeBase: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  uploadDocument: { role: "editor", scoped: "check", targets: (r) => kb(r.header?.knowledgeBase ?? "") },
  // Checked message by message: the header names the knowledge base.
  uploadDocumentStream: { role: "editor", scoped: "check", targets: (r) => (r.part.case === "header" ? kb(r.part.value.knowledgeBase) : {}) },
  // An archive holds what a reader of the base already reads (documents, metadata, chunks) plus
  // vectors: a reader's call, for a base in scope.
  exportKnowledgeBase: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  // An import creates a base, which a scoped key could not see: only unscoped editors import.
  importKnowledgeBase: { role: "editor", scoped: "deny" },
  importKnowledgeBaseStream: { role: "editor", scoped: "deny" },
  // Sources name their base with the source, and the gateway answers a source of another base as
  // missing: the base's scope check covers the source.
  addSource: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  listSources: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  syncSource: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  removeSource: { role: "editor", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  watchSourceSync: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  getDocument: { role: "reader", scoped: "check", targets: (r) => doc(r.documentId) },
  listDocuments: { role: "reader", scoped: "check", targets: (r) => kb(r.knowledgeBase) },
  setDocumentEnabled: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  deleteDocument: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  getChunkNeighbours: { role: "reader", scoped: "check", targets: (r) => ({ documents: [r.documentId], chunks: present(r.chunkId) }) },
  reingestDocument: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  // Chunk look-ups and edits name their document; the index refuses a chunk of any other one.
  listDocumentChunks: { role: "reader", scoped: "check", targets: (r) => doc(r.documentId) },
  editChunk: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  setChunkEnabled: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  addChunk: { role: "editor", scoped: "check", targets: (r) => doc(r.documentId) },
  watchIngestion: {
    role: "reader",
    scoped: "check",
    targets: (r) => ({ documents: [...r.documentIds], knowledgeBases: r.knowledgeBase ? [r.knowledgeBase] : [] }),
  },
  // Parses and chunks without storing: part of preparing an upload, so an editor's call.
  previewChunks: { role: "editor", scoped: "check", targets: (r) => ({ knowledgeBases: r.knowledgeBase ? [r.knowledgeBase] : [] }) },
  // What any deployment reads is no tenant's secret.
  listReadableFormats: { role: "reader", scoped: "check", targets: () => ({}) },
  listEmbeddingModels: { role: "reader", scoped: "check", targets: () => ({}) },
  // Every key may know itself.
  getCaller: { role: "reader", scoped: "check", targets: () => ({}) },
  search: { role: "reader", scoped: "check", targets: (r) => ({ knowledgeBases: [...r.knowledgeBases], unbounded: r.knowledgeBases.length === 0 }) },
  chat: {
    role: "reader",
    scoped: "check",
    targets: (r) => ({
      knowledgeBases: [...r.knowledgeBases],
      assistants: present(r.assistant),
      conversations: present(r.conversationId),
      unbounded: r.knowledgeBases.length === 0 && !r.assistant && !r.conversationId,
    }),
  },
  // Assistants: a scoped key sees and uses only those whose mounted bases are all in its scope. It
  // names none: assistants' names are shared by every key, and "taken" would reveal one it cannot see.
  createAssistant: { role: "editor", scoped: "deny" },
  getAssistant: { role: "reader", scoped: "check", targets: (r) => ({ assistants: [r.assistant] }) },
  listAssistants: {
    role: "reader",
    scoped: "filter",
    filter: (res, allowed) => {
      res.assistants = res.assistants.filter((a) => a.knowledgeBases.every((m) => allowed.has(m.knowledgeBase)));
    },
  },
  updateAssistant: {
    role: "editor",
    scoped: "check",
    targets: (r) => ({
      assistants: [r.assistant],
      knowledgeBases: (r.update?.knowledgeBases ?? []).map((m) => m.knowledgeBase),
      renames: { kind: "assistants", of: r.assistant, to: r.update?.name ?? "" },
    }),
  },
  deleteAssistant: { role: "editor", scoped: "check", targets: (r) => ({ assistants: [r.assistant] }) },
  // Conversations and turns: in scope when every base the conversation searched is.
  listConversations: {
    role: "reader",
    scoped: "filter",
    targets: (r) => ({ assistants: present(r.assistant) }),
    filter: (res, allowed) => {
      res.conversations = res.conversations.filter((c) => c.knowledgeBaseIds.every((id) => allowed.has(id)));
    },
  },
  getConversation: { role: "reader", scoped: "check", targets: (r) => ({ conversations: [r.conversationId] }) },
  // Deleting discards what others may rely on (provenance), so it is a write.
  deleteConversation: { role: "editor", scoped: "check", targets: (r) => ({ conversations: [r.conversationId] }) },
  getTurn: { role: "reader", scoped: "check", targets: (r) => ({ turns: [r.turnId] }) },
  // Managed corrections change what an assistant answers for everyone who asks it: an editor's
  // call. Publishing creates the assistant's corrections base, which no scope covers (as for
  // createKnowledgeBase), so only unscoped keys correct and delete; a scoped reader may list the
  // corrections of an assistant it may use, since its answers show them anyway.
  correctAnswer: { role: "editor", scoped: "deny" },
  listCorrections: { role: "reader", scoped: "check", targets: (r) => ({ assistants: [r.assistant] }) },
  deleteCorrection: { role: "editor", scoped: "deny" },
  // A rerun of retrieval with the chunks' text, as Search shows it: a reader's call, within the key's scope.
  debugRetrieval: {
    role: "reader",
    scoped: "check",
    targets: (r) => ({
      knowledgeBases: [...r.knowledgeBases],
      assistants: present(r.assistant),
      turns: present(r.turnId),
      documents: present(r.expect?.documentId ?? ""),
      chunks: present(r.expect?.chunkId ?? ""),
      unbounded: r.knowledgeBases.length === 0 && !r.assistant && !r.turnId,
    }),
  },
  // Admin keys are never scoped, so "deny" only restates that a scoped key cannot manage keys.
  createApiKey: { role: "admin", scoped: "deny" },
  listApiKeys: { role: "admin", scoped: "deny" },
  revokeApiKey: { role: "admin", scoped: "deny" },
  // The operator's view spans every base (dead letters name their documents): unscoped admins only.
  getSystemStatus: { role: "admin", scoped: "deny" },
  redriveDeadLetters: { role: "admin", scoped: "deny" },
};

export function ruleFor(methodLocalName: string): AccessRule | undefined {
  return (ACCESS_RULES as Record<string, AccessRule | undefined>)[methodLocalName];
}

export const PUBLIC_SERVICE = QuarryService.typeName;
