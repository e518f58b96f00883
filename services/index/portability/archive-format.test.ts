// The archive's own checks on its assistants (version 2): the corrections a header announces must be
// the correction lines the file holds, each naming an assistant the header has; an archive without
// assistants keeps version 1, which older readers take.
import { describe, expect, it } from "vitest";
import { readArchive, writeArchive, type ArchivedAssistant, type ArchivedDocument } from "./archive-format.ts";

const settings = { name: "kb", description: "", embeddingModel: "m", embeddingDimension: 4, chunking: { strategy: "recursive" as const, chunkSize: 100, chunkOverlap: 0, separators: [] } };

function document(fileName: string, correctionsOf?: number): ArchivedDocument {
  return {
    fileName,
    mimeType: "text/plain",
    sizeBytes: 1,
    contentHash: fileName,
    version: 1,
    status: "failed",
    errorMessage: "no matter",
    enabled: true,
    metadata: {},
    chunkCount: 0,
    tokenCount: 0,
    createdAt: new Date(0).toISOString(),
    wholeDocumentVector: false,
    chunks: [],
    ...(correctionsOf === undefined ? {} : { correctionsOf }),
  };
}

const keeper = (corrections: number): ArchivedAssistant => ({
  assistant: { name: "keeper" },
  mount: { topK: 0, priority: 0 },
  corrections: { knowledgeBase: { ...settings, name: "keeper · corrections" }, documents: corrections },
});

async function read(assistants: ArchivedAssistant[] | undefined, documents: ArchivedDocument[]) {
  async function* lines() {
    yield* documents;
  }
  const parts: Buffer[] = [];
  for await (const part of writeArchive({ exportedAt: "", vectors: false, knowledgeBase: settings, ...(assistants ? { assistants } : {}) }, lines())) parts.push(Buffer.from(part));
  const archive = await readArchive(
    (async function* () {
      yield Buffer.concat(parts);
    })(),
  );
  const names: string[] = [];
  for await (const d of archive.documents) names.push(`${d.fileName}:${d.correctionsOf ?? "-"}`);
  return { version: archive.header.version, names };
}

describe("the archive's assistants", () => {
  it("reads a base's documents and an assistant's corrections in order, as version 2", async () => {
    expect(await read([keeper(1)], [document("a.txt"), document("correction-1.txt", 0)])).toEqual({ version: 2, names: ["a.txt:-", "correction-1.txt:0"] });
  });

  it("writes version 1 when it holds no assistant", async () => {
    expect((await read(undefined, [document("a.txt")])).version).toBe(1);
    expect((await read([], [document("a.txt")])).version).toBe(1);
  });

  it("refuses corrections the header did not announce, or fewer than it did", async () => {
    await expect(read([keeper(1)], [document("a.txt")])).rejects.toThrow("its header announces 1 corrections of the assistant keeper, the file holds 0");
    await expect(read([keeper(0)], [document("c.txt", 0)])).rejects.toThrow("announces 0 corrections");
    await expect(read([keeper(1)], [document("c.txt", 3)])).rejects.toThrow("a correction of an assistant the header does not hold");
  });
});
