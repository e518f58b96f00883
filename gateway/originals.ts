// The original bytes of every uploaded document, kept so it can be ingested again (ReingestDocument)
// with its base's current settings without the client sending it again. One file per document, the
// latest version's, under the blob folder (which the gateways of a distributed deployment already
// share with the parsers); written to a temporary name and renamed, so a reader never sees half.
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export class Originals {
  private readonly root: string;

  constructor(blobDir: string) {
    this.root = join(blobDir, "originals");
  }

  async save(knowledgeBaseId: string, documentId: string, content: Uint8Array): Promise<void> {
    const dir = join(this.root, safe(knowledgeBaseId));
    await mkdir(dir, { recursive: true });
    const temporary = join(dir, `.${safe(documentId)}.${randomUUID()}`);
    await writeFile(temporary, content);
    await rename(temporary, join(dir, safe(documentId)));
  }

  /** The kept bytes, or undefined when none were kept. */
  async read(knowledgeBaseId: string, documentId: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(join(this.root, safe(knowledgeBaseId), safe(documentId)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async remove(knowledgeBaseId: string, documentId: string): Promise<void> {
    await rm(join(this.root, safe(knowledgeBaseId), safe(documentId)), { force: true });
  }

  async removeKnowledgeBase(knowledgeBaseId: string): Promise<void> {
    await rm(join(this.root, safe(knowledgeBaseId)), { recursive: true, force: true });
  }
}

/** Ids are Quarry's own (kb_…, doc_…), but a path is never built from an unchecked string. */
function safe(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`not an id Quarry makes: ${JSON.stringify(id)}`);
  return id;
}
