// Live writes during a change of embedding model across two index replicas: replica a runs the
// change, documents are re-ingested, added and deleted through replica b meanwhile (b's engine
// knows no shadow), and after the switch every live document holds the new model's vectors of its
// latest text, and none deleted is left. On OpenSearch each replica opens its own stores (its own
// engine and catalog objects, as two processes); embedded SQLite is one process, so both replicas
// share its stores. Vectors are the hashing embedder's of "<model> <text>", so a vector tells which
// model and which text it was made from.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EmbeddedChunk } from "../../../lib/domain.ts";
import { SqliteLeaseStore } from "../../../lib/leases/sqlite-lease-store.ts";
import { Leases } from "../../../lib/leases/leases.ts";
import { silentLogger } from "../../../lib/logger.ts";
import { hashingVector } from "../../../lib/testing/hashing-embedder.ts";
import { engineAddress } from "../../../test/support/engines.ts";
import { openStores } from "../main.ts";
import { deleteOpenSearchNamespace } from "../opensearch/opensearch-namespace.ts";
import { ModelChanges, type ModelVectorizer } from "./model-change.ts";

const OLD = "old-model";
const TARGET = "target-model";
const DIMENSIONS: Record<string, number> = { [OLD]: 6, [TARGET]: 10 };
const WORDS = ["amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor"];

function vectorOf(model: string, text: string): Float32Array {
  return hashingVector(`${model} ${text}`, DIMENSIONS[model]);
}

/** The hashing embedder per model; hold(text) pauses the call that embeds that text until letGo(). */
class GatedVectorizer implements ModelVectorizer {
  private gate: { text: string; open: Promise<void>; release(): void; arrived(): void } | undefined;
  reached: Promise<void> = Promise.resolve();

  hold(text: string): void {
    let release = () => {};
    let arrived = () => {};
    this.reached = new Promise((resolve) => (arrived = resolve));
    const open = new Promise<void>((resolve) => (release = resolve));
    this.gate = { text, open, release, arrived };
  }

  letGo(): void {
    const gate = this.gate;
    this.gate = undefined;
    gate?.release();
  }

  async modelInfo(model: string) {
    return { model, dimension: DIMENSIONS[model], maxInputTokens: 512 };
  }

  async embedDocuments(model: string, texts: string[], dimension: number): Promise<Float32Array[]> {
    const gate = this.gate;
    if (gate && texts.includes(gate.text)) {
      gate.arrived();
      await gate.open;
    }
    return texts.map((text) => hashingVector(`${model} ${text}`, dimension));
  }
}

type Stores = Awaited<ReturnType<typeof openStores>>;

interface Replica {
  stores: Stores;
  changes: ModelChanges;
  vectorizer: GatedVectorizer;
}

interface Cluster {
  a: Replica;
  b: Replica;
  close(): Promise<void>;
}

const backends: { name: string; open: () => Promise<Cluster> | undefined }[] = [
  {
    name: "embedded SQLite (one process, both replicas on its stores)",
    open: () => cluster(async (dir) => {
      const stores = await openStores({ QUARRY_DATA_DIR: dir });
      return { a: stores, b: stores, close: () => stores.close() };
    }),
  },
  {
    name: "OpenSearch (each replica its own stores)",
    open: () => {
      const url = engineAddress("OPENSEARCH_URL");
      if (!url) return undefined;
      const prefix = `quarry-mcr-${randomBytes(4).toString("hex")}`;
      const env = { OPENSEARCH_URL: url, QUARRY_OPENSEARCH_PREFIX: prefix };
      return cluster(async () => {
        const [a, b] = [await openStores(env), await openStores(env)];
        return { a, b, close: async () => (await Promise.allSettled([a.close(), b.close()]), await deleteOpenSearchNamespace(url, prefix)) };
      });
    },
  },
];

async function cluster(open: (dir: string) => Promise<{ a: Stores; b: Stores; close(): Promise<void> }>): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), "quarry-model-change-replicas-"));
  const stores = await open(dir);
  const leases: Leases[] = [];
  const replica = (own: Stores, owner: string): Replica => {
    const lease = new Leases(new SqliteLeaseStore(join(dir, "leases.db")), { ttlMs: 5_000, logger: silentLogger, owner });
    leases.push(lease);
    const vectorizer = new GatedVectorizer();
    return { stores: own, vectorizer, changes: new ModelChanges({ catalog: own.catalog, engine: own.engine, vectorizer, logger: silentLogger, leases: lease, progressIntervalMs: 0, fencePollMs: 20 }) };
  };
  const a = replica(stores.a, "a");
  const b = replica(stores.b, "b");
  return {
    a,
    b,
    close: async () => {
      // A failed test may leave an embedding held: let it go, so the changes can stop.
      a.vectorizer.letGo();
      b.vectorizer.letGo();
      await Promise.allSettled([a.changes.close(), b.changes.close()]);
      await Promise.allSettled(leases.map((l) => l.close()));
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function chunksOf(knowledgeBaseId: string, documentId: string, texts: string[], model: string): EmbeddedChunk[] {
  let start = 0;
  return texts.map((text, index) => {
    const chunk = { id: `${documentId}-${index}`, documentId, knowledgeBaseId, index, text, tokenCount: 3, page: 1, pageEnd: 1, sectionPath: [], start, end: start + text.length, vector: vectorOf(model, text) };
    start += text.length;
    return chunk;
  });
}

/** Two chunks per document; a version's texts keep the chunk ids (and count), so only the texts tell versions apart. */
function textsOf(i: number, version: number): string[] {
  return [`${WORDS[i]} part one version ${version}`, `${WORDS[i]} part two version ${version}`];
}

let open: Cluster | undefined;

afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe.each(backends)("live writes during a change of embedding model on $name", (backend) => {
  it("re-ingests, adds and deletes through the replica not running the change: after the switch every document has the new model's vectors of its latest text, and deleted ones are gone", async (context) => {
    const started = backend.open();
    // engineAddress has said SKIPPED in one loud line (or failed the run where engines are required).
    if (!started) return context.skip();
    open = await started;
    const { a, b } = open;
    const kb = await a.stores.catalog.createKnowledgeBase({ name: "replicas", description: "", embeddingModel: OLD, embeddingDimension: DIMENSIONS[OLD], chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 0, separators: [] } });
    await a.stores.engine.ensureKnowledgeBase(kb.id, DIMENSIONS[OLD]);
    await b.stores.engine.ensureKnowledgeBase(kb.id, DIMENSIONS[OLD]);
    const ids: string[] = [];
    const ingest = async (replica: Replica, i: number, version: number, model = OLD) => {
      const fileName = `d${i}.txt`;
      const { document } = await replica.stores.catalog.registerDocument({ knowledgeBaseId: kb.id, fileName, mimeType: "text/plain", sizeBytes: 10, contentHash: `h${i}-${version}`, version, metadata: {} });
      ids[i] = document.id;
      await replica.changes.storeDocumentChunks(kb.id, document.id, fileName, model, chunksOf(kb.id, document.id, textsOf(i, version), model));
    };
    const remove = async (replica: Replica, i: number) => {
      await replica.changes.guard(replica.stores.engine).deleteDocument(kb.id, ids[i]);
      await replica.stores.catalog.deleteDocument(ids[i]);
    };
    for (let i = 0; i < 6; i++) await ingest(a, i, 1);

    // a's pass over the documents (in file name order) stops while it embeds d2: d0 and d1 are in its shadow.
    a.vectorizer.hold(textsOf(2, 1)[0]);
    await a.changes.start(kb.id, TARGET);
    await a.vectorizer.reached;
    await ingest(b, 0, 2); // already in the shadow, same chunk ids: its shadow vectors would be stale
    await ingest(b, 2, 2); // being embedded right now, from the old text
    await remove(b, 1); // already in the shadow: it would come back with the switch
    await remove(b, 4); // not reached yet
    await ingest(b, 6, 1); // new to the base
    // Once switching, a re-embeds the marked documents; it stops on d0's new text, and a write through b waits for the switch.
    a.vectorizer.letGo();
    a.vectorizer.hold(textsOf(0, 2)[0]); // before a carries on: letGo's waiter resumes only after this turn
    await a.vectorizer.reached;
    expect((await b.stores.catalog.getKnowledgeBase(kb.id)).modelChange).toMatchObject({ state: "running", switching: true, holder: "a" });
    let late = false;
    const lateWrite = ingest(b, 5, 3).then(() => (late = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(late).toBe(false);
    a.vectorizer.letGo();
    await a.changes.settled(kb.id);
    await lateWrite;

    const base = await b.stores.catalog.getKnowledgeBase(kb.id);
    expect([base.embeddingModel, base.embeddingDimension, base.modelChange?.state, base.modelChange?.switching]).toEqual([TARGET, DIMENSIONS[TARGET], "done", false]);
    expect(await b.stores.catalog.modelChangeDocuments(kb.id)).toEqual([]);

    const latest = new Map<number, number>([[0, 2], [2, 2], [3, 1], [5, 3], [6, 1]]);
    for (const replica of [a, b]) {
      for (const [i, version] of latest) {
        const stored = await replica.stores.engine.documentWithVectors(kb.id, ids[i]);
        expect(stored.chunks.map((c) => c.text), `d${i}`).toEqual(textsOf(i, version));
        expect(stored.chunks.map((c) => [...c.vector]), `d${i}'s vectors`).toEqual(textsOf(i, version).map((text) => [...vectorOf(TARGET, text)]));
      }
      for (const i of [1, 4]) expect(await replica.stores.engine.documentChunks(kb.id, ids[i]), `deleted d${i}`).toEqual([]);
      // Searchable in the new model's space through either replica: every live chunk, nothing deleted.
      const hits = await replica.stores.engine.search({ knowledgeBaseIds: [kb.id], text: "", vector: vectorOf(TARGET, "part"), mode: "vector", topK: 50, minScore: 0, documentIds: [] });
      expect(hits.map((h) => h.chunk.id).sort()).toEqual([...latest.keys()].flatMap((i) => [`${ids[i]}-0`, `${ids[i]}-1`]).sort());
    }
  });
});
