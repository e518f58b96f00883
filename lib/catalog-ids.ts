// Identifier schemes shared by every Catalog implementation, so a document keeps its id when a
// deployment moves between the embedded and the distributed store.
import { createHash, randomBytes } from "node:crypto";
import { InvalidInputError } from "./errors.ts";

const KNOWLEDGE_BASE_ID_PREFIX = "kb_";

/** A fresh knowledge base id: lower-case hex, usable in table and index names. */
export function newKnowledgeBaseId(): string {
  return `${KNOWLEDGE_BASE_ID_PREFIX}${randomBytes(10).toString("hex")}`;
}

/**
 * Every RPC names a knowledge base by id or by name, and the id is tried first; a base named like
 * an id ("kb_…") could therefore be shadowed by, or stand in for, another base. Such names are
 * refused when a base is created.
 */
export function checkKnowledgeBaseName(name: string): void {
  if (name.toLowerCase().startsWith(KNOWLEDGE_BASE_ID_PREFIX)) {
    throw new InvalidInputError(
      `a knowledge base name may not start with "${KNOWLEDGE_BASE_ID_PREFIX}": that is how knowledge base ids look, and "${name}" could be taken for one`,
    );
  }
}

/** The stable id of the document named fileName in a knowledge base. */
export function documentIdFor(knowledgeBaseId: string, fileName: string): string {
  const digest = createHash("sha256").update(`${knowledgeBaseId}\0${fileName}`).digest("hex");
  return `doc_${digest.slice(0, 32)}`;
}

/**
 * A chunk's id: the same document, position and text always give the same id, so re-indexing an
 * unchanged document overwrites rather than duplicates, while an edited chunk gets a new id.
 * 128 bits of sha256 keep ids short with no practical chance of collision. Here, not in the chunker,
 * since an import (services/index/portability/) names the chunks of the documents it makes too.
 */
export function chunkId(documentId: string, index: number, text: string): string {
  return createHash("sha256").update(`${documentId}\0${index}\0${text}`).digest("hex").slice(0, 32);
}
