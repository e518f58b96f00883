import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FailedPreconditionError } from "../../lib/errors.ts";
import { defaultModelDir, OnnxEmbedder } from "./onnx-embedder.ts";
import { ThreadedEmbedder } from "./threaded-embedder.ts";

describe("ThreadedEmbedder", () => {
  let threaded: ThreadedEmbedder;
  let direct: OnnxEmbedder;
  beforeAll(async () => {
    [threaded, direct] = await Promise.all([ThreadedEmbedder.load(defaultModelDir()), OnnxEmbedder.load(defaultModelDir())]);
  });
  afterAll(async () => {
    await Promise.all([threaded?.close(), direct?.close()]);
  });

  it("gives the same vectors as the model run on this thread", async () => {
    const texts = ["How do I reset my password?", "数据并行与模型并行", "The weather in Paris is sunny"];
    const [a, b] = await Promise.all([threaded.embed(texts, "document"), direct.embed(texts, "document")]);
    expect(a).toHaveLength(3);
    a.forEach((v, i) => {
      expect(v).toHaveLength(384);
      v.forEach((x, j) => expect(x).toBeCloseTo(b[i][j], 5));
    });
    expect(threaded.info()).toEqual(direct.info());
  });

  it("keeps this thread's event loop free while it embeds", async () => {
    const passages = Array.from({ length: 64 }, (_, i) => `Passage ${i}: ${"retrieval augmented generation with citations ".repeat(20)}`);
    let longestGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 10);
    await threaded.embed(passages, "document");
    clearInterval(timer);
    // Embedding 64 long passages takes seconds on this machine; a blocked loop would show a gap that long.
    expect(longestGap).toBeLessThan(2_500);
  });

  it("answers a question asked during a large document call before that call ends", async () => {
    // Ten forward passes of documents, as the vectorizing stage sends during a bulk ingest.
    const passages = Array.from({ length: 320 }, (_, i) => `Passage ${i}: ${"hybrid retrieval with citations ".repeat(8)}`);
    const finished: string[] = [];
    const documents = threaded.embed(passages, "document").then(() => finished.push("documents"));
    await new Promise((r) => setTimeout(r, 50));
    const question = threaded.embed(["Which engine does the k-NN plugin use?"], "query").then(() => finished.push("question"));
    await Promise.all([documents, question]);
    expect(finished).toEqual(["question", "documents"]);
  });

  it("reports a missing model as the same clear error the model itself gives", async () => {
    const empty = mkdtempSync(join(tmpdir(), "quarry-no-model-"));
    try {
      await expect(ThreadedEmbedder.load(empty)).rejects.toThrow(FailedPreconditionError);
      await expect(ThreadedEmbedder.load(empty)).rejects.toThrow(/npm run setup/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
