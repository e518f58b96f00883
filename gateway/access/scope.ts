// Scope before existence: the one check of whether a key limited to knowledge bases may reach what a
// request names. Each named object (a base by id or name; a chunk, document, assistant, conversation
// or turn by id; a correction is a document) is looked up only to learn which bases it reaches, and
// one that is out of scope is answered exactly like one that does not exist: NOT_FOUND, with the
// same message either way. Otherwise the answer would tell a scoped key what other tenants hold
// (a chunk id is a hash of its text, so a guessed text could be confirmed by its id).
//
// The access interceptor calls it for every rule's targets (access-rules.ts); a new RPC that takes
// an id names it in its rule's targets and is covered, with no check in its handler.
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { NotFoundError, PermissionDeniedError } from "../../lib/errors.ts";
import type { Principal } from "./principal.ts";

/**
 * What a request names: knowledge bases (ids or names), chunks and documents (ids), and the
 * assistants, conversations and turns it names, which are in scope when every base they search is.
 */
export interface Targets {
  knowledgeBases?: string[];
  chunks?: string[];
  documents?: string[];
  assistants?: string[];
  conversations?: string[];
  turns?: string[];
  /** The request names no base and so could mean all of them: a scoped key is refused (fail closed). */
  unbounded?: boolean;
  /**
   * The request would give a base or an assistant a new name. Names are shared by every key, so a
   * scoped key told "taken" would learn of a base or assistant outside its scope: it may only keep
   * the name the object has (an update that sends the whole object back does).
   */
  renames?: { kind: "knowledgeBases" | "assistants"; of: string; to: string };
}

export type ScopeLookups = Pick<Client<typeof IndexService>, "getKnowledgeBase" | "getDocument" | "getChunks" | "getAssistant" | "getConversation" | "getTurn">;

type Kind = Exclude<keyof Targets, "unbounded" | "renames">;

const NOUN: Record<Kind, string> = {
  knowledgeBases: "knowledge base",
  chunks: "chunk",
  documents: "document",
  assistants: "assistant",
  conversations: "conversation",
  turns: "turn",
};

/** The answer for a hidden or missing object: the same words whichever it is. */
export function notVisible(who: Principal, kind: Kind, id: string): NotFoundError {
  return new NotFoundError(`no ${NOUN[kind]} "${id}" in the knowledge bases the API key "${who.name}" may reach`);
}

export class Scope {
  constructor(private readonly index: ScopeLookups) {}

  /** Throws unless every target is in the key's scope; returns quietly for an unscoped key. */
  async check(who: Principal, targets: Targets): Promise<void> {
    if (who.knowledgeBaseIds.length === 0) return;
    if (targets.unbounded) throw new PermissionDeniedError(`the API key "${who.name}" is limited to knowledge bases: name them`);
    const allowed = new Set(who.knowledgeBaseIds);
    const named = (Object.keys(NOUN) as Kind[]).flatMap((kind) => [...new Set(targets[kind] ?? [])].map((id) => ({ kind, id })));
    const reached = await Promise.all(named.map(({ kind, id }) => this.basesOf(kind, id)));
    const hidden = named.find((_, i) => {
      const ids = reached[i];
      return !ids || ids.length === 0 || ids.some((id) => !allowed.has(id));
    });
    if (hidden) throw notVisible(who, hidden.kind, hidden.id);
    // An empty name is not a rename but a mistake, which the index answers as such.
    const to = targets.renames?.to.trim();
    if (targets.renames && to && (await this.nameOf(targets.renames)) !== to) {
      throw new PermissionDeniedError(
        `the API key "${who.name}" is limited to knowledge bases and cannot rename a ${NOUN[targets.renames.kind]}: names are shared by every key, so only an unscoped key chooses them`,
      );
    }
  }

  /** The current name of an object the request renames (already known to be in scope). */
  private async nameOf({ kind, of }: NonNullable<Targets["renames"]>): Promise<string | undefined> {
    if (kind === "knowledgeBases") return (await this.index.getKnowledgeBase({ knowledgeBase: of })).knowledgeBase?.name;
    return (await this.index.getAssistant({ assistant: of })).assistant?.name;
  }

  /** The bases an object reaches; undefined when it does not exist. */
  private async basesOf(kind: Kind, id: string): Promise<string[] | undefined> {
    const index = this.index;
    switch (kind) {
      case "knowledgeBases":
        return index.getKnowledgeBase({ knowledgeBase: id }).then((r) => r.knowledgeBase && [r.knowledgeBase.id], missing);
      case "chunks":
        return index.getChunks({ chunkIds: [id] }).then((r) => r.chunks.filter((c) => c.id === id).map((c) => c.knowledgeBaseId), missing);
      case "documents":
        return index.getDocument({ documentId: id }).then((r) => r.document && [r.document.knowledgeBaseId], missing);
      case "assistants":
        return index.getAssistant({ assistant: id }).then((r) => r.assistant?.knowledgeBases.map((m) => m.knowledgeBase), missing);
      case "conversations":
        return index.getConversation({ conversationId: id }).then((r) => r.conversation?.knowledgeBaseIds, missing);
      case "turns":
        return index.getTurn({ turnId: id }).then((r) => r.turn?.provenance?.knowledgeBaseIds, missing);
    }
  }
}

function missing(error: unknown): undefined {
  const code = error instanceof ConnectError ? error.code : undefined;
  // An id the index cannot even parse names nothing, as one it cannot find.
  if (code === Code.NotFound || code === Code.InvalidArgument) return undefined;
  throw error;
}
