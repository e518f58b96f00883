// The original bytes of every uploaded document, kept so it can be ingested again (ReingestDocument)
// with its base's current settings without the client sending it again, and downloaded. One blob
// per document, the latest version's, at originals/<kb>/<doc> in the blob store (the folder the
// gateways and parsers share, or an S3 bucket), written whole so a reader never sees half.
import { BlobNotFoundError, type BlobBody, type BlobStore } from "../lib/blobs/blob-store.ts";

export class Originals {
  constructor(private readonly blobs: BlobStore) {}

  async save(knowledgeBaseId: string, documentId: string, content: BlobBody): Promise<void> {
    await this.blobs.put(key(knowledgeBaseId, documentId), content);
  }

  /** The kept bytes, or undefined when none were kept. */
  async read(knowledgeBaseId: string, documentId: string): Promise<Uint8Array | undefined> {
    return this.blobs.read(key(knowledgeBaseId, documentId)).catch(undefinedWhenMissing);
  }

  /** The kept bytes as a stream, or undefined when none were kept. */
  async open(knowledgeBaseId: string, documentId: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    return this.blobs.open(key(knowledgeBaseId, documentId)).catch(undefinedWhenMissing);
  }

  async remove(knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.blobs.delete(key(knowledgeBaseId, documentId));
  }

  async removeKnowledgeBase(knowledgeBaseId: string): Promise<void> {
    await this.blobs.deletePrefix(`originals/${safe(knowledgeBaseId)}/`);
  }
}

function undefinedWhenMissing(error: unknown): undefined {
  if (error instanceof BlobNotFoundError) return undefined;
  throw error;
}

function key(knowledgeBaseId: string, documentId: string): string {
  return `originals/${safe(knowledgeBaseId)}/${safe(documentId)}`;
}

/** Ids are Quarry's own (kb_…, doc_…), but a key is never built from an unchecked string. */
function safe(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`not an id Quarry makes: ${JSON.stringify(id)}`);
  return id;
}
