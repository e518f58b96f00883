// A knowledge base per embedding model, end to end over HTTP: a base created with bge-small-zh-v1.5
// (CLS pooling, 512 dimensions, a query prefix) beside one on the default English model, Chinese
// text ingested and found in vector mode by questions that share few words with it, and one search
// across both bases (the question embedded once per model). Run embedded on SQLite, embedded on
// OpenSearch, and distributed (six processes on OpenSearch and Kafka) when the engines are there.
// The models are installed by `npm test`'s setup.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { describeWithAllEngines } from "../distributed/engines-all.ts";
import { startDistributedQuarry } from "../support/distributed-quarry.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const ZH_MODEL = "bge-small-zh-v1.5";

// Four short passages on unrelated topics, and for each a question in other words.
const ZH_DOCS: Record<string, string> = {
  "panda.md": "# 大熊猫\n\n大熊猫是中国特有的珍稀哺乳动物，主要栖息在四川、陕西和甘肃的山地森林里，日常几乎只吃竹笋和竹叶。",
  "rail.md": "# 京沪高铁\n\n京沪高速铁路连接北京与上海，全长一千三百多公里，复兴号列车的最高运营时速为三百五十公里。",
  "tea.md": "# 龙井\n\n龙井产于浙江杭州西湖周边的群山之中，属于绿茶，以色绿、香郁、味甘、形美著称。",
  "wall.md": "# 长城\n\n长城是古代王朝为抵御北方游牧民族南下而修筑的军事防御工程，东起山海关，西至嘉峪关。",
};
const ZH_QUESTIONS: { q: string; file: string }[] = [
  { q: "哪种动物以竹子为食？", file: "panda.md" },
  { q: "从首都坐火车去上海最快有多快？", file: "rail.md" },
  { q: "杭州出产什么有名的饮品？", file: "tea.md" },
  { q: "古代修建什么来防御北方的入侵？", file: "wall.md" },
];
const EN_DOC = "# Typewriters\n\nThe first commercially successful typewriter was patented in 1868 by Christopher Latham Sholes.";

interface Running {
  client: QuarryClient;
  stop(): Promise<void>;
}

function modelSuite(backend: string, start: () => Promise<Running>) {
  describe(`knowledge bases with their own embedding models (${backend})`, () => {
    let quarry: Running;

    beforeAll(async () => {
      quarry = await start();
    }, 180_000);
    afterAll(async () => {
      await quarry?.stop();
    });

    it("creates a base with bge-small-zh-v1.5 at its own dimension beside one on the default model", async () => {
      const zh = (await quarry.client.createKnowledgeBase({ name: "zh", embeddingModel: ZH_MODEL })).knowledgeBase!;
      expect([zh.embeddingModel, zh.embeddingDimension]).toEqual([ZH_MODEL, 512]);
      const en = (await quarry.client.createKnowledgeBase({ name: "en" })).knowledgeBase!;
      expect([en.embeddingModel, en.embeddingDimension]).toEqual(["all-MiniLM-L6-v2-int8", 384]);
      const listed = (await quarry.client.listKnowledgeBases({})).knowledgeBases.map((k) => [k.name, k.embeddingModel]);
      expect(listed).toEqual(expect.arrayContaining([["zh", ZH_MODEL], ["en", "all-MiniLM-L6-v2-int8"]]));
    });

    it("refuses a model it does not know, naming the ones it has", async () => {
      const error = await quarry.client.createKnowledgeBase({ name: "nope", embeddingModel: "no-such-model" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.NotFound);
      expect((error as ConnectError).rawMessage).toContain(ZH_MODEL);
    });

    it("ingests Chinese text into the bge base and English into the other", async () => {
      const ids: string[] = [];
      for (const [file, text] of Object.entries(ZH_DOCS)) {
        const { document } = await upload(quarry.client, "zh", file, new TextEncoder().encode(text));
        ids.push(document!.id);
      }
      const { document: enDoc } = await upload(quarry.client, "en", "typewriter.md", new TextEncoder().encode(EN_DOC));
      ids.push(enDoc!.id);
      const log = await watchAll(quarry.client, ids);
      for (const id of ids) expect(lastUpdate(log, id).status, lastUpdate(log, id).error).toBe(DocumentStatus.READY);
      // Chunks are counted in bge-small-zh's own word pieces: one per Han character, plus the rest.
      const docs = (await quarry.client.listDocuments({ knowledgeBase: "zh" })).documents;
      const panda = docs.find((d) => d.fileName === "panda.md")!;
      expect(panda.tokenCount).toBeGreaterThanOrEqual([...ZH_DOCS["panda.md"].matchAll(/\p{Script=Han}/gu)].length);
    }, 180_000);

    it("finds each Chinese passage by its meaning in vector mode", async () => {
      for (const { q, file } of ZH_QUESTIONS) {
        const res = await quarry.client.search({ query: q, knowledgeBases: ["zh"], settings: { mode: RetrievalMode.VECTOR, topK: 4 } });
        expect(res.hits.map((h) => h.fileName)[0], q).toBe(file);
        // bge-small-zh reads the question, so hybrid keeps its vector list (the gate leaves it in).
        const hybrid = await quarry.client.search({ query: q, knowledgeBases: ["zh"], settings: { mode: RetrievalMode.HYBRID, topK: 4 } });
        expect(hybrid.hits[0].fileName, q).toBe(file);
        expect(hybrid.hits[0].explain?.vectorRank).toBe(1);
      }
    });

    it("searches bases with different models at once, embedding the question with each", async () => {
      const res = await quarry.client.search({
        query: "Who patented the typewriter? 哪种动物以竹子为食？",
        knowledgeBases: ["zh", "en"],
        settings: { mode: RetrievalMode.VECTOR, topK: 5 },
      });
      const files = res.hits.map((h) => h.fileName);
      expect(files).toContain("typewriter.md");
      expect(files.filter((f) => f in ZH_DOCS).length).toBe(4);
      // One list per model, merged rank by rank: the top hit of each base comes before the rest.
      expect(new Set(files.slice(0, 2))).toContain("typewriter.md");
    });
  });
}

modelSuite("embedded, SQLite", () => startEmbeddedQuarry());

// The index on OpenSearch, in one process: each base's vectors in its own index at its dimension.
describeWithEngine("OPENSEARCH_URL", "embedded on OpenSearch", (opensearchUrl) => {
  modelSuite("embedded, OpenSearch", async () => {
    const prefix = `quarry-models-${randomBytes(4).toString("hex")}`;
    const quarry = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    return { client: quarry.client, stop: async () => (await quarry.stop(), await deleteOpenSearchNamespace(opensearchUrl, prefix)) };
  });
});

// Six processes over gRPC: the embedder process loads bge-small-zh when the gateway first asks for
// it, the chunker process asks the embedder for that model's limit and reads its tokenizer.
describeWithAllEngines("distributed", (engines) => {
  modelSuite("distributed, OpenSearch and Kafka", () => startDistributedQuarry(engines));
});
