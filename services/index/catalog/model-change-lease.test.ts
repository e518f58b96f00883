// A change of embedding model with two index replicas (two ModelChanges on one store, each with
// its own connection to the leases): exactly one runs it, the other's resumeInterrupted() leaves a
// held change alone, and takes it over when its holder dies (stops renewing) — once.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FailedPreconditionError, UnavailableError } from "../../../lib/errors.ts";
import { SqliteLeaseStore } from "../../../lib/leases/sqlite-lease-store.ts";
import { Leases } from "../../../lib/leases/leases.ts";
import { createLogger, silentLogger } from "../../../lib/logger.ts";
import { hashingVector } from "../../../lib/testing/hashing-embedder.ts";
import { openStores } from "../main.ts";
import { changeLease, ModelChanges, type ModelVectorizer } from "./model-change.ts";

const TTL_MS = 1_500;
const TARGET = "target-model";

/** The hashing embedder as the change needs it, counting each document's re-embedding; `hold` pauses it. */
class CountingVectorizer implements ModelVectorizer {
  readonly embedded: string[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private arrived: (() => void) | undefined;
  /** Resolves when an embedding call arrives while held. */
  reached: Promise<void> = Promise.resolve();

  hold(): void {
    this.reached = new Promise((resolve) => (this.arrived = resolve));
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  letGo(): void {
    this.open?.();
    this.gate = undefined;
  }

  async modelInfo(model: string) {
    return { model, dimension: model === TARGET ? 3 : 2, maxInputTokens: 512 };
  }

  async embedDocuments(model: string, texts: string[], dimension: number): Promise<Float32Array[]> {
    this.arrived?.();
    if (this.gate) await this.gate;
    this.embedded.push(texts[0]);
    return texts.map((text) => hashingVector(text, dimension));
  }
}

let dir: string;
let stores: Awaited<ReturnType<typeof openStores>>;
let kbId: string;
const opened: Leases[] = [];

/** The embedder unavailable for its first `failures` calls (a replica being lost), then the hashing one. */
class FlakyVectorizer extends CountingVectorizer {
  calls = 0;
  constructor(private failures: number, private readonly error: () => Error = () => new UnavailableError("embedder: connect ECONNREFUSED")) {
    super();
  }

  override async embedDocuments(model: string, texts: string[], dimension: number): Promise<Float32Array[]> {
    this.calls++;
    if (this.failures-- > 0) throw this.error();
    return super.embedDocuments(model, texts, dimension);
  }
}

function replica(vectorizer: CountingVectorizer, owner: string, options: { unavailableForMs?: number; retryInitialMs?: number; retryMaxMs?: number } = {}): ModelChanges & { store: SqliteLeaseStore; leases: Leases } {
  const store = new SqliteLeaseStore(join(dir, "leases.db"));
  const leases = new Leases(store, { ttlMs: TTL_MS, logger: silentLogger, owner });
  opened.push(leases);
  return Object.assign(new ModelChanges({ catalog: stores.catalog, engine: stores.engine, vectorizer, logger: process.env.DEBUG_LEASE ? createLogger(owner) : silentLogger, leases, progressIntervalMs: 0, retryInitialMs: 10, ...options }), { store, leases });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-model-change-lease-"));
  stores = await openStores({ QUARRY_DATA_DIR: dir });
  const kb = await stores.catalog.createKnowledgeBase({
    name: "docs",
    description: "",
    embeddingModel: "old-model",
    embeddingDimension: 2,
    chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 0, separators: [] },
  });
  kbId = kb.id;
  await stores.engine.ensureKnowledgeBase(kb.id, 2);
  for (let i = 0; i < 3; i++) {
    const { document } = await stores.catalog.registerDocument({ knowledgeBaseId: kb.id, fileName: `d${i}.txt`, mimeType: "text/plain", sizeBytes: 10, contentHash: `h${i}`, version: 1, metadata: {} });
    const text = `document ${i} text`;
    await stores.engine.replaceDocumentChunks(kb.id, document.id, document.fileName, [
      { id: `${document.id}-0`, documentId: document.id, knowledgeBaseId: kb.id, index: 0, text, tokenCount: 3, page: 1, pageEnd: 1, sectionPath: [], start: 0, end: text.length, vector: hashingVector(text, 2) },
    ]);
  }
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((leases) => leases.close()));
  await stores.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a change of embedding model across index replicas", () => {
  it("started on two replicas at once, runs on exactly one: the other is refused with FAILED_PRECONDITION", async () => {
    const [va, vb] = [new CountingVectorizer(), new CountingVectorizer()];
    const [a, b] = [replica(va, "a"), replica(vb, "b")];
    const results = await Promise.allSettled([a.start(kbId, TARGET), b.start(kbId, TARGET)]);
    const refused = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(FailedPreconditionError);
    await Promise.all([a.settled(kbId), b.settled(kbId)]);
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.embeddingModel, kb.modelChange?.state]).toEqual([TARGET, "done"]);
    // Each document re-embedded once, all by the replica that runs the change.
    expect([...va.embedded, ...vb.embedded].sort()).toEqual(["document 0 text", "document 1 text", "document 2 text"]);
    await Promise.all([a.close(), b.close()]);
  });

  it("another replica's resumeInterrupted leaves a held change alone, and takes it over once its holder dies", async () => {
    const [va, vb] = [new CountingVectorizer(), new CountingVectorizer()];
    const a = replica(va, "a");
    va.hold();
    await a.start(kbId, TARGET);
    await va.reached;
    const b = replica(vb, "b");
    await b.resumeInterrupted();
    const held = await b.leases.holder(changeLease(kbId));
    expect(held?.owner).toBe("a");
    await b.settled(kbId);
    expect(vb.embedded).toEqual([]);

    // a dies: it stops renewing (its connection is gone) while its change hangs mid-document.
    await a.store.close();
    const lastDeadline = async () => (await b.store.holder(changeLease(kbId)))!.expiresAt;
    const deadline = await lastDeadline();
    await b.watchInterrupted();
    await waitFor(async () => (await stores.catalog.getKnowledgeBase(kbId)).modelChange?.state === "done");
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.embeddingModel, kb.embeddingDimension, kb.modelChange?.state]).toEqual([TARGET, 3, "done"]);
    // b finished it after a's time limit ran out, not before.
    expect(kb.modelChange!.updatedAt.getTime()).toBeGreaterThanOrEqual(deadline);
    expect(await b.leases.holder(changeLease(kbId))).toBeUndefined();
    expect([...vb.embedded].sort()).toEqual(["document 0 text", "document 1 text", "document 2 text"]);

    // a wakes up: it finds its lease lost and stops without touching the finished change.
    va.letGo();
    await a.settled(kbId);
    const after = await stores.catalog.getKnowledgeBase(kbId);
    expect([after.embeddingModel, after.modelChange?.state, after.modelChange?.error]).toEqual([TARGET, "done", ""]);
    await Promise.all([a.close(), b.close()]);
  });
});

describe("a change of embedding model while the embedder is briefly unavailable", () => {
  it("tries the document again and finishes, each document re-embedded once", async () => {
    const flaky = new FlakyVectorizer(3);
    const a = replica(flaky, "a");
    await a.start(kbId, TARGET);
    await a.settled(kbId);
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.embeddingModel, kb.modelChange?.state, kb.modelChange?.error]).toEqual([TARGET, "done", ""]);
    expect(flaky.calls).toBe(3 + 3);
    expect([...flaky.embedded].sort()).toEqual(["document 0 text", "document 1 text", "document 2 text"]);
    await a.close();
  });

  it("fails the change, the old model kept, once the embedder stays unavailable past the limit", async () => {
    const a = replica(new FlakyVectorizer(1_000), "a", { unavailableForMs: 200 });
    await a.start(kbId, TARGET);
    await a.settled(kbId);
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.embeddingModel, kb.modelChange?.state, kb.modelChange?.error]).toEqual(["old-model", "failed", "embedder: connect ECONNREFUSED"]);
    await a.close();
  });

  it("stops waiting to try again when the service shuts down, the change left RUNNING to resume", async () => {
    // An hour's pause: a close() that waited it out would hang the test.
    const flaky = new FlakyVectorizer(1_000);
    const a = replica(flaky, "a", { retryInitialMs: 3_600_000, retryMaxMs: 3_600_000 });
    await a.start(kbId, TARGET);
    await waitFor(async () => flaky.calls === 1);
    await a.close();
    await a.settled(kbId);
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.embeddingModel, kb.modelChange?.state, flaky.calls]).toEqual(["old-model", "running", 1]);
  });

  it("fails at once on an error no retry gets past", async () => {
    const flaky = new FlakyVectorizer(1, () => new FailedPreconditionError("the embedder returned 5 dimensions, not 3"));
    const a = replica(flaky, "a");
    await a.start(kbId, TARGET);
    await a.settled(kbId);
    const kb = await stores.catalog.getKnowledgeBase(kbId);
    expect([kb.modelChange?.state, flaky.calls]).toEqual(["failed", 1]);
    await a.close();
  });
});

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
