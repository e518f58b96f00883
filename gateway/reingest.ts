// Re-ingesting a document from the original bytes the gateway kept (originals.ts): the same upload
// path as a new file, registered as a re-ingest so identical content still becomes a new version,
// which the pipeline parses, chunks (with the base's settings as they are now), embeds and indexes.
import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Document } from "../gen/quarry/common/v1/common_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { FailedPreconditionError } from "../lib/errors.ts";
import type { Originals } from "./originals.ts";
import type { UploadInput } from "./upload.ts";

export interface ReingestDeps {
  index: Client<typeof IndexService>;
  originals: Pick<Originals, "read">;
  /** The gateway's upload path (check, register, keep, publish). */
  submit(input: UploadInput): Promise<{ document: Document | undefined }>;
}

export class Reingest {
  constructor(private readonly deps: ReingestDeps) {}

  /** The new version, pending; FailedPreconditionError when the original was not kept. */
  async document(documentId: string): Promise<Document> {
    const { document } = await this.deps.index.getDocument({ documentId });
    const content = await this.original(document!);
    if (!content) {
      throw new FailedPreconditionError(
        `the original of ${document!.fileName} was not kept (it was submitted before Quarry kept originals, by a producer outside the gateway, or changed meanwhile); upload it again`,
      );
    }
    return this.submit(document!, content);
  }

  /** Every document whose original was kept, as new versions; the others are returned as not kept. */
  async knowledgeBase(knowledgeBaseId: string): Promise<{ documents: Document[]; notKept: Document[] }> {
    const { documents } = await this.deps.index.listDocuments({ knowledgeBaseId });
    const submitted: Document[] = [];
    const notKept: Document[] = [];
    for (const document of documents) {
      const content = await this.original(document);
      if (content) submitted.push(await this.submit(document, content));
      else notKept.push(document);
    }
    return { documents: submitted, notKept };
  }

  /** The kept bytes, only when they are the current version's (a later upload may have raced the keep). */
  private async original(document: Document): Promise<Uint8Array | undefined> {
    const content = await this.deps.originals.read(document.knowledgeBaseId, document.id);
    if (!content) return undefined;
    return createHash("sha256").update(content).digest("hex") === document.contentHash ? content : undefined;
  }

  private async submit(document: Document, content: Uint8Array): Promise<Document> {
    const result = await this.deps.submit({
      knowledgeBase: document.knowledgeBaseId,
      fileName: document.fileName,
      mimeType: document.mimeType,
      metadata: { ...document.metadata },
      content,
      reingest: true,
    });
    return result.document!;
  }
}
