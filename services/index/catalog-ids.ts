// Identifier schemes shared by every Catalog implementation, so a document keeps its id when a
// deployment moves between the embedded and the distributed store.
import { createHash, randomBytes } from "node:crypto";

/** A fresh knowledge base id: lower-case hex, usable in table and index names. */
export function newKnowledgeBaseId(): string {
  return `kb_${randomBytes(10).toString("hex")}`;
}

/** The stable id of the document named fileName in a knowledge base. */
export function documentIdFor(knowledgeBaseId: string, fileName: string): string {
  const digest = createHash("sha256").update(`${knowledgeBaseId}\0${fileName}`).digest("hex");
  return `doc_${digest.slice(0, 32)}`;
}
