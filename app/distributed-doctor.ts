// `quarry doctor` for a distributed Quarry (OPENSEARCH_URL or ELASTICSEARCH_URL set): the embedded
// doctor's checks where they apply, through the index's own stores — the catalog against each base's
// chunk index (chunk counts, chunks no catalog document owns, chunks without a vector), documents
// stuck mid-ingest, originals missing from the blob store, and the messages waiting in Kafka's
// dead-letter topics when KAFKA_BROKERS is set and reachable. With repair: orphaned chunks are
// deleted and stuck documents marked failed with the reason, both through the stores' own writes,
// so it is safe while Quarry serves. The keyword-index check is SQLite's alone: an engine's BM25
// statistics follow its own deletes.
import { Kafka, logLevel } from "kafkajs";
import { openBlobStore } from "../lib/blobs/blob-store-from-config.ts";
import { deadLetterTopic, Topics } from "../lib/bus/event-bus.ts";
import { optional, type Env } from "../lib/config.ts";
import type { DocumentRecord } from "../lib/domain.ts";
import { FailedPreconditionError } from "../lib/errors.ts";
import { indexConfig, openStores } from "../services/index/index.ts";
import { orphanChunksFinding, STUCK_AFTER_MS, type DoctorFinding, type OrphanedChunks } from "./embedded-doctor.ts";

const WORKING = new Set(["pending", "parsing", "chunking", "embedding", "indexing"]);

export function isDistributedIndex(env: Env): boolean {
  return indexConfig(env).backend !== "sqlite";
}

export async function doctorDistributed(env: Env, options: { repair?: boolean; now?: number } = {}): Promise<DoctorFinding[]> {
  const stores = await openStores(env);
  const { catalog, engine } = stores;
  try {
    const census = engine.chunkCensus?.bind(engine);
    if (!census) throw new FailedPreconditionError("this index's search engine cannot count its chunks");
    const now = options.now ?? Date.now();
    const miscounted: string[] = [];
    const orphans: OrphanedChunks[] = [];
    const stuck: DocumentRecord[] = [];
    const documents: DocumentRecord[] = [];
    let withoutVector = 0;
    for (const kb of await catalog.listKnowledgeBases()) {
      const listed = await catalog.listDocuments(kb.id);
      documents.push(...listed);
      const stored = await census(kb.id);
      withoutVector += stored.withoutVector;
      const known = new Set(listed.map((d) => d.id));
      for (const [documentId, chunks] of stored.chunks) if (!known.has(documentId)) orphans.push({ knowledgeBaseId: kb.id, documentId, chunks });
      for (const d of listed) {
        const held = stored.chunks.get(d.id) ?? 0;
        if (d.status === "ready" && held !== d.chunkCount) miscounted.push(`${kb.name}/${d.fileName}: catalog ${d.chunkCount}, stored ${held}`);
        if (WORKING.has(d.status) && d.updatedAt.getTime() < now - STUCK_AFTER_MS) stuck.push(d);
      }
    }
    const findings: DoctorFinding[] = [];
    findings.push({ check: "ready documents whose chunk count the store does not hold", count: miscounted.length, detail: miscounted.slice(0, 5).join("; ") });

    findings.push(await orphanChunksFinding(orphans, options.repair ? (o) => engine.deleteDocument(o.knowledgeBaseId, o.documentId) : undefined));
    findings.push({ check: "chunks without a vector", count: withoutVector, detail: "" });

    const stuckFinding: DoctorFinding = {
      check: `documents stuck mid-ingest for over ${STUCK_AFTER_MS / 60_000} minutes`,
      count: stuck.length,
      detail: stuck.slice(0, 5).map((d) => `${d.fileName} (${d.status})`).join("; "),
    };
    if (options.repair && stuck.length > 0) {
      for (const d of stuck) {
        // A progress event of the document's own version, as a stage's failure would be: the catalog's one way to fail a document.
        await catalog.applyProgress({
          documentId: d.id,
          knowledgeBaseId: d.knowledgeBaseId,
          version: d.version,
          phase: "failed",
          percent: 100,
          message: "",
          error: `stuck in ${d.status} since ${d.updatedAt.toISOString()}; marked failed by quarry doctor --repair: re-ingest it`,
          chunkCount: 0,
          tokenCount: 0,
          at: new Date(now),
        });
      }
      stuckFinding.repaired = `marked ${stuck.length} failed with the reason`;
    }
    findings.push(stuckFinding);

    // In whichever store keeps them (the blob folder, or S3 with QUARRY_BLOB_URL).
    const kept = new Set(await (await openBlobStore(env)).list("originals/"));
    const missing = documents.filter((d) => !kept.has(`originals/${d.knowledgeBaseId}/${d.id}`));
    findings.push({ check: "documents without a kept original (re-ingest needs them uploaded again)", count: missing.length, detail: "" });

    findings.push(await deadLetters(env));
    return findings;
  } finally {
    await stores.close();
  }
}

/** Messages waiting in Quarry's dead-letter topics on Kafka (high watermark − low, per partition). */
export async function deadLetters(env: Env): Promise<DoctorFinding> {
  const check = "messages in dead-letter topics";
  const brokers = optional(env, "KAFKA_BROKERS");
  if (!brokers) return { check, count: 0, detail: "not checked: KAFKA_BROKERS is not set" };
  const prefix = optional(env, "QUARRY_TOPIC_PREFIX") ?? "";
  const admin = new Kafka({ clientId: "quarry-doctor", brokers: brokers.split(","), logLevel: logLevel.NOTHING, connectionTimeout: 5_000, retry: { retries: 2 } }).admin();
  try {
    await admin.connect();
  } catch (error) {
    return { check, count: 0, detail: `not checked: Kafka at ${brokers} did not answer (${error instanceof Error ? error.message : String(error)})` };
  }
  try {
    const existing = new Set(await admin.listTopics());
    const waiting: string[] = [];
    let count = 0;
    for (const topic of Object.values(Topics).map((t) => deadLetterTopic(prefix + t))) {
      if (!existing.has(topic)) continue;
      const n = (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(BigInt(p.high) - BigInt(p.low)), 0);
      if (n > 0) waiting.push(`${topic}: ${n}`);
      count += n;
    }
    return { check, count, detail: waiting.join("; ") };
  } finally {
    await admin.disconnect();
  }
}
