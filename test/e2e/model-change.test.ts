// Changing a knowledge base's embedding model end to end over HTTP: a base made with the default
// English model (all-MiniLM-L6-v2, 384 dims) holding Chinese and English passages is switched to
// bge-small-zh-v1.5 (512 dims). Searches keep working while it re-embeds (with the old model's
// vectors and query embeddings), a passage uploaded meanwhile is searchable with the new model
// after the switch, and afterwards vector search finds each Chinese passage by its meaning. Bad
// requests get invalid_argument / failed_precondition; a model that is not installed leaves the old
// model searchable and the base says why. Run embedded on SQLite, and on OpenSearch and
// Elasticsearch when they are there. The models are installed by `npm test`'s setup.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { DocumentStatus, ModelChangeState, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { ModelChangePhase, type WatchModelChangeResponse } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { modelsDir } from "../../lib/config.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const OLD_MODEL = "all-MiniLM-L6-v2-int8";
const NEW_MODEL = "bge-small-zh-v1.5";

const ZH_DOCS: Record<string, string> = {
  "panda.md": "# 大熊猫\n\n大熊猫是中国特有的珍稀哺乳动物，主要栖息在四川、陕西和甘肃的山地森林里，日常几乎只吃竹笋和竹叶。",
  "rail.md": "# 京沪高铁\n\n京沪高速铁路连接北京与上海，全长一千三百多公里，复兴号列车的最高运营时速为三百五十公里。",
  "wall.md": "# 长城\n\n长城是古代王朝为抵御北方游牧民族南下而修筑的军事防御工程，东起山海关，西至嘉峪关。",
};
// Uploaded while the change runs.
const LATE_DOC = { file: "tea.md", text: "# 龙井\n\n龙井产于浙江杭州西湖周边的群山之中，属于绿茶，以色绿、香郁、味甘、形美著称。" };
const EN_DOC = "# Typewriters\n\nThe first commercially successful typewriter was patented in 1868 by Christopher Latham Sholes.";
const ZH_QUESTIONS: { q: string; file: string }[] = [
  { q: "哪种动物以竹子为食？", file: "panda.md" },
  { q: "从首都坐火车去上海最快有多快？", file: "rail.md" },
  { q: "古代修建什么来防御北方的入侵？", file: "wall.md" },
  { q: "杭州出产什么有名的饮品？", file: "tea.md" },
];
// English filler, so the re-embedding takes long enough to search and upload during it.
const FILLER = Array.from({ length: 40 }, (_, i) => [`notes-${i}.md`, `# Notes ${i}\n\n${"Field notes on weather, soil and harvest timing for plot " + i + ". ".repeat(1)}`.repeat(6)] as const);

/** Every event of WatchModelChange until the stream ends. */
async function watchChange(client: QuarryClient, kb: string): Promise<WatchModelChangeResponse[]> {
  const events: WatchModelChangeResponse[] = [];
  for await (const event of client.watchModelChange({ knowledgeBase: kb }, { signal: AbortSignal.timeout(280_000) })) events.push(event);
  return events;
}

async function ingest(client: QuarryClient, kb: string, files: readonly (readonly [string, string])[]): Promise<void> {
  const ids: string[] = [];
  for (const [file, text] of files) ids.push((await upload(client, kb, file, new TextEncoder().encode(text))).document!.id);
  const log = await watchAll(client, ids);
  for (const id of ids) expect(lastUpdate(log, id).status, lastUpdate(log, id).error).toBe(DocumentStatus.READY);
}

function changeSuite(backend: string, start: (env?: Record<string, string>) => Promise<{ client: QuarryClient; stop(): Promise<void> }>) {
  describe(`changing a knowledge base's embedding model (${backend})`, () => {
    let quarry: { client: QuarryClient; stop(): Promise<void> };
    const kb = `switch-${randomBytes(3).toString("hex")}`;

    beforeAll(async () => {
      quarry = await start();
      const created = (await quarry.client.createKnowledgeBase({ name: kb })).knowledgeBase!;
      expect([created.embeddingModel, created.embeddingDimension]).toEqual([OLD_MODEL, 384]);
      await ingest(quarry.client, kb, [...Object.entries(ZH_DOCS), ["typewriter.md", EN_DOC], ...FILLER]);
    }, 300_000);
    afterAll(async () => {
      await quarry?.stop();
    });

    it("refuses a model the embedder does not know (naming the catalog's) and the model the base already has", async () => {
      const unknown = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: kb, embeddingModel: "no-such-model" }));
      expect(unknown.code).toBe(Code.InvalidArgument);
      expect(unknown.rawMessage).toContain(NEW_MODEL);
      expect(unknown.rawMessage).toContain("bge-small-en-v1.5");
      const same = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: kb, embeddingModel: OLD_MODEL }));
      expect(same.code).toBe(Code.FailedPrecondition);
      const missing = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: "no-such-base", embeddingModel: NEW_MODEL }));
      expect(missing.code).toBe(Code.NotFound);
    });

    it("re-embeds side by side: searches and uploads work during the change, the base switches when every document is done", async () => {
      const started = (await quarry.client.changeEmbeddingModel({ knowledgeBase: kb, embeddingModel: NEW_MODEL })).knowledgeBase!;
      expect(started.embeddingModel).toBe(OLD_MODEL);
      expect(started.modelChange).toMatchObject({ targetModel: NEW_MODEL, targetDimension: 512, previousModel: OLD_MODEL, state: ModelChangeState.RUNNING, documentsTotal: 44 });
      const again = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: kb, embeddingModel: "bge-small-en-v1.5" }));
      expect(again.code).toBe(Code.FailedPrecondition);
      const watching = watchChange(quarry.client, kb);

      // A document uploaded while the change runs: stored with the old model now, re-embedded before the switch.
      const late = (await upload(quarry.client, kb, LATE_DOC.file, new TextEncoder().encode(LATE_DOC.text))).document!;
      let searchesDuring = 0;
      const seen: number[] = [];
      for (;;) {
        const current = (await quarry.client.getKnowledgeBase({ knowledgeBase: kb })).knowledgeBase!;
        const change = current.modelChange!;
        if (change.state !== ModelChangeState.RUNNING) break;
        seen.push(change.documentsDone);
        expect(current.embeddingModel).toBe(OLD_MODEL);
        const hits = await quarry.client.search({ query: "typewriter patented", knowledgeBases: [kb], settings: { mode: RetrievalMode.VECTOR, topK: 3 } });
        expect(hits.hits.map((h) => h.fileName)).toContain("typewriter.md");
        searchesDuring++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(searchesDuring).toBeGreaterThan(0);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));

      const after = (await quarry.client.getKnowledgeBase({ knowledgeBase: kb })).knowledgeBase!;
      expect(after.modelChange).toMatchObject({ state: ModelChangeState.DONE, targetModel: NEW_MODEL, error: "", documentsDone: 45, documentsTotal: 45 });
      expect([after.embeddingModel, after.embeddingDimension]).toEqual([NEW_MODEL, 512]);
      const lateLog = await watchAll(quarry.client, [late.id]);
      expect(lastUpdate(lateLog, late.id).status).toBe(DocumentStatus.READY);

      // The same change as events: counts that only grow, then the switch, and the stream ends.
      const events = await watching;
      expect(events.every((e) => e.knowledgeBaseId === started.id)).toBe(true);
      expect(events[0].phase).toBe(ModelChangePhase.REEMBEDDING);
      const reembedding = events.filter((e) => e.phase === ModelChangePhase.REEMBEDDING);
      for (const e of reembedding) expect(e.message).toBe(`${e.change!.documentsDone}/${e.change!.documentsTotal} documents re-embedded with ${NEW_MODEL}`);
      const counts = reembedding.map((e) => e.change!.documentsDone);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      // Only news: no event repeats the one before (a total may grow by the document uploaded meanwhile).
      expect(events.every((e, i) => i === 0 || e.message !== events[i - 1].message)).toBe(true);
      expect(events.slice(0, -1).every((e) => e.phase === ModelChangePhase.REEMBEDDING || e.phase === ModelChangePhase.SWITCHING)).toBe(true);
      expect(events.at(-1)).toMatchObject({ phase: ModelChangePhase.DONE, message: `switched from ${OLD_MODEL} to ${NEW_MODEL} (512 dims)` });
      expect(events.at(-1)!.change).toMatchObject({ state: ModelChangeState.DONE, documentsDone: 45, documentsTotal: 45 });
      // Watching a finished change gives its outcome once.
      expect((await watchChange(quarry.client, kb)).map((e) => e.phase)).toEqual([ModelChangePhase.DONE]);
    }, 300_000);

    it("finds each Chinese passage by its meaning with the new model, and the English one still", async () => {
      for (const { q, file } of ZH_QUESTIONS) {
        const res = await quarry.client.search({ query: q, knowledgeBases: [kb], settings: { mode: RetrievalMode.VECTOR, topK: 3 } });
        expect(res.hits[0]?.fileName, q).toBe(file);
        const hybrid = await quarry.client.search({ query: q, knowledgeBases: [kb], settings: { mode: RetrievalMode.HYBRID, topK: 3 } });
        expect(hybrid.hits[0]?.fileName, q).toBe(file);
      }
      const en = await quarry.client.search({ query: "Who patented the typewriter?", knowledgeBases: [kb], settings: { mode: RetrievalMode.HYBRID, topK: 3 } });
      expect(en.hits[0]?.fileName).toBe("typewriter.md");
    });

    it("embeds a document uploaded after the switch with the new model", async () => {
      await ingest(quarry.client, kb, [["after.md", "# 敦煌\n\n莫高窟位于甘肃敦煌，保存着从四世纪到十四世纪的大量壁画和彩塑。"]]);
      const res = await quarry.client.search({ query: "哪里有古代的壁画？", knowledgeBases: [kb], settings: { mode: RetrievalMode.VECTOR, topK: 3 } });
      expect(res.hits[0]?.fileName).toBe("after.md");
    });
  });
}

changeSuite("embedded, SQLite", () => startEmbeddedQuarry());

describeWithEngine("OPENSEARCH_URL", "embedded on OpenSearch", (opensearchUrl) => {
  changeSuite("embedded, OpenSearch", async () => {
    const prefix = `quarry-switch-${randomBytes(4).toString("hex")}`;
    const quarry = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    return { client: quarry.client, stop: async () => (await quarry.stop(), await deleteOpenSearchNamespace(opensearchUrl, prefix)) };
  });
});

// The index on Elasticsearch (used when only ELASTICSEARCH_URL is set).
describeWithEngine("ELASTICSEARCH_URL", "embedded on Elasticsearch", (elasticsearchUrl) => {
  changeSuite("embedded, Elasticsearch", async () => {
    const prefix = `quarry-switch-${randomBytes(4).toString("hex")}`;
    const quarry = await startEmbeddedQuarry({ env: { ELASTICSEARCH_URL: elasticsearchUrl, QUARRY_ELASTICSEARCH_PREFIX: prefix } });
    return { client: quarry.client, stop: async () => (await quarry.stop(), await deleteElasticsearchNamespace(elasticsearchUrl, prefix)) };
  });
});

/** Elasticsearch refuses wildcard deletes (destructive_requires_name): each index and template by name. */
async function deleteElasticsearchNamespace(url: string, prefix: string): Promise<void> {
  const indices = (await (await fetch(`${url}/_cat/indices/${prefix}*?format=json&expand_wildcards=all`)).json()) as { index: string }[];
  for (const { index } of indices) await fetch(`${url}/${index}`, { method: "DELETE" });
  const templates = (await (await fetch(`${url}/_index_template/${prefix}*`)).json()) as { index_templates?: { name: string }[] };
  for (const { name } of templates.index_templates ?? []) await fetch(`${url}/_index_template/${name}`, { method: "DELETE" });
}

describe("a change of embedding model interrupted by a shutdown", () => {
  it("stays running in the catalog and finishes after the restart", async () => {
    let quarry = await startEmbeddedQuarry();
    const dataDir = quarry.dataDir;
    try {
      await quarry.client.createKnowledgeBase({ name: "restart" });
      const many = Array.from({ length: 120 }, (_, i) => [`n-${i}.md`, `# Note ${i}\n\n` + `Observations about tide pools, barnacles and kelp at station ${i}. `.repeat(8)] as const);
      await ingest(quarry.client, "restart", [["typewriter.md", EN_DOC], ...many]);
      await quarry.client.changeEmbeddingModel({ knowledgeBase: "restart", embeddingModel: NEW_MODEL });
      const before = (await quarry.client.getKnowledgeBase({ knowledgeBase: "restart" })).knowledgeBase!.modelChange!;
      expect(before.state).toBe(ModelChangeState.RUNNING);
      await quarry.stop({ keepData: true });

      quarry = await startEmbeddedQuarry({ dataDir });
      let kb = (await quarry.client.getKnowledgeBase({ knowledgeBase: "restart" })).knowledgeBase!;
      // Resumed from an empty shadow: 121 documents take seconds, so it is still running here.
      expect(kb.modelChange?.state).toBe(ModelChangeState.RUNNING);
      for (let i = 0; i < 600 && kb.modelChange?.state === ModelChangeState.RUNNING; i++) {
        expect(kb.embeddingModel).toBe(OLD_MODEL);
        await new Promise((resolve) => setTimeout(resolve, 200));
        kb = (await quarry.client.getKnowledgeBase({ knowledgeBase: "restart" })).knowledgeBase!;
      }
      expect(kb.modelChange).toMatchObject({ state: ModelChangeState.DONE, documentsDone: 121, documentsTotal: 121 });
      expect(kb.embeddingModel).toBe(NEW_MODEL);
      const hits = await quarry.client.search({ query: "哪种动物以竹子为食？ typewriter", knowledgeBases: ["restart"], settings: { mode: RetrievalMode.VECTOR, topK: 1 } });
      expect(hits.hits).toHaveLength(1);
    } finally {
      await quarry.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe("a change of embedding model that cannot run", () => {
  let quarry: Awaited<ReturnType<typeof startEmbeddedQuarry>>;
  let models: string;

  beforeAll(async () => {
    // A models folder with the default model only: bge-small-zh is in the catalog but not installed.
    models = await mkdtemp(join(tmpdir(), "quarry-models-"));
    await symlink(join(modelsDir(process.env), OLD_MODEL), join(models, OLD_MODEL));
    quarry = await startEmbeddedQuarry({ env: { QUARRY_MODELS_DIR: models } });
    await quarry.client.createKnowledgeBase({ name: "stays" });
    await ingest(quarry.client, "stays", [["typewriter.md", EN_DOC]]);
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
    await rm(models, { recursive: true, force: true });
  });

  it("leaves the old model in place and searchable, and the base says why", async () => {
    expect((await watchChange(quarry.client, "stays")).map((e) => [e.phase, e.message])).toEqual([[ModelChangePhase.NONE, `${OLD_MODEL}, no change of model`]]);
    const error = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: "stays", embeddingModel: NEW_MODEL }));
    expect(error.code).toBe(Code.FailedPrecondition);
    const kb = (await quarry.client.getKnowledgeBase({ knowledgeBase: "stays" })).knowledgeBase!;
    expect([kb.embeddingModel, kb.embeddingDimension]).toEqual([OLD_MODEL, 384]);
    expect(kb.modelChange).toMatchObject({ state: ModelChangeState.FAILED, targetModel: NEW_MODEL, previousModel: OLD_MODEL });
    expect(kb.modelChange!.error).toMatch(/install|fetch/i);
    const failed = await watchChange(quarry.client, "stays");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ phase: ModelChangePhase.FAILED, message: `the change to ${NEW_MODEL} failed, ${OLD_MODEL} stays: ${kb.modelChange!.error}` });
    expect((await failure(() => watchChange(quarry.client, "no-such-base"))).code).toBe(Code.NotFound);
    const hits = await quarry.client.search({ query: "Who patented the typewriter?", knowledgeBases: ["stays"], settings: { mode: RetrievalMode.VECTOR, topK: 1 } });
    expect(hits.hits[0]?.fileName).toBe("typewriter.md");
    // A failed change does not block the next one.
    const again = await failure(() => quarry.client.changeEmbeddingModel({ knowledgeBase: "stays", embeddingModel: NEW_MODEL }));
    expect(again.code).toBe(Code.FailedPrecondition);
  });
});
