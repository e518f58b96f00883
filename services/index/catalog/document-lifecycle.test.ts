import { describe, expect, it } from "vitest";
import { RETRYING_MARK, type DocumentRecord, type IngestionProgress } from "../../../lib/domain.ts";
import { pendingDocument, progressedDocument } from "./document-lifecycle.ts";

const now = new Date("2026-01-01T10:00:00Z");
const registered = pendingDocument("doc", { knowledgeBaseId: "kb", fileName: "a.txt", mimeType: "text/plain", sizeBytes: 1, contentHash: "h", version: 1, metadata: {} }, now);
const progress = (phase: IngestionProgress["phase"], error = ""): IngestionProgress => ({
  documentId: "doc", knowledgeBaseId: "kb", version: 1, phase, percent: phase === "embedding" ? 40 : 0, message: "", error, chunkCount: 0, tokenCount: 0, at: now,
});
const after = (current: DocumentRecord, ...steps: IngestionProgress[]) => steps.reduce((record, step) => progressedDocument(record, step, now) ?? record, current);

describe("a document's status after progress", () => {
  it("keeps a final failure final against late progress", () => {
    const failed = after(registered, progress("failed", "embedder: down (gave up after 10 redrives)"));
    expect(after(failed, progress("embedding")).status).toBe("failed");
    expect(after(failed, progress("failed", "another final failure")).errorMessage).toBe("embedder: down (gave up after 10 redrives)");
  });

  it("reopens a final failure that an operator re-drives: the retrying failure first, then the stages' progress", () => {
    const failed = after(registered, progress("failed", "embedder: down (gave up after 0 redrives)"));
    const reopened = after(failed, progress("failed", `embedder: re-driven by an operator ${RETRYING_MARK}`));
    expect([reopened.status, reopened.errorMessage]).toEqual(["failed", `embedder: re-driven by an operator ${RETRYING_MARK}`]);
    const moving = after(reopened, progress("embedding"));
    expect([moving.status, moving.errorMessage]).toEqual(["embedding", ""]);
  });
});
