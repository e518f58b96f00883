// Changing a knowledge base's embedding model, side by side: every document's stored chunks are
// embedded again with the new model into the engine's shadow (a vec0 table on SQLite, the next
// index behind the alias on OpenSearch and Elasticsearch) while searches keep the old vectors and
// the catalog keeps naming the old model; when no live chunk lacks a new vector, the shadow is
// swapped in and the catalog switches, under the knowledge base's write lock. A failure drops the
// shadow and leaves the old model in place, and the base's model_change says why.
//
// This is a stage of its own in the index, not a detour through chunks.created → embedder →
// chunks.embedded (docs/architecture/models-and-documents.md says why). Writes that arrive meanwhile go through
// storeDocumentChunks and the locked engine of guard(): a document indexed during the change is
// stored live with the old model's vectors (searches use those); chunks that arrive after the switch
// still carrying the old model's vectors (embedded before it) are embedded again with the base's
// model before they are stored. Of several index replicas exactly one runs a base's change: it
// holds the base's lease (lib/leases/) while it runs, stops between two documents when it loses
// it, and a replica that finds a running change nobody holds (its owner died) takes it over from
// an empty shadow. The write lock is in-process; across replicas the catalog orders writes with the
// switch (model-change-fence.ts): every replica marks the documents it writes during the change,
// and the change re-embeds the marked ones (or takes deleted ones out of the shadow) once it is
// switching, when writes wait or are written again after the switch.
import type { EmbeddedChunk, KnowledgeBase, ModelChange } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import { Backoff, sleep } from "../../../lib/backoff.ts";
import type { Logger } from "../../../lib/logger.ts";
import type { HeldLease, Leases } from "../../../lib/leases/leases.ts";
import { documentInput } from "../../../lib/document-input.ts";
import type { Catalog } from "./catalog.ts";
import { BaseWriteLocks } from "./base-write-locks.ts";
import { ModelChangeFence } from "./model-change-fence.ts";
import type { SearchEngine } from "../search/search-engine.ts";

/** The embedder as a change of model needs it. */
export interface ModelVectorizer {
  /** Loads the model; NotFoundError (or InvalidInputError) for a model the embedder does not know. */
  modelInfo(model: string): Promise<{ model: string; dimension: number; maxInputTokens: number }>;
  /** Passage vectors of the texts with the model, checked to have the dimension. */
  embedDocuments(model: string, texts: string[], dimension: number): Promise<Float32Array[]>;
}

export interface ModelChangesDeps {
  catalog: Catalog;
  engine: SearchEngine;
  vectorizer: ModelVectorizer;
  logger: Logger;
  /** Who runs each base's change, across the index replicas. */
  leases: Leases;
  /** Least time between two progress writes to the catalog (default 500 ms). */
  progressIntervalMs?: number;
  /** How often a write waiting for another replica's switch reads the catalog (default 100 ms). */
  fencePollMs?: number;
  /**
   * How long one document's re-embedding keeps being tried again while the embedder or the engine
   * is unavailable (a replica or node being lost) before the change fails (default 5 minutes).
   */
  unavailableForMs?: number;
  /** The first wait before such a try again (default 500 ms; it doubles up to retryMaxMs). */
  retryInitialMs?: number;
  /** The longest wait between two such tries (default 10 s). */
  retryMaxMs?: number;
}

export class ModelChanges {
  private readonly locks = new BaseWriteLocks();
  private readonly running = new Map<string, Promise<void>>();
  private readonly switches = new Map<string, Promise<void>>();
  private closing = false;
  /** Ends a change's pause between tries at once when the service shuts down. */
  private readonly closed = new AbortController();
  private resumeTimer: NodeJS.Timeout | undefined;
  private readonly fence: ModelChangeFence;

  constructor(private readonly deps: ModelChangesDeps) {
    this.fence = new ModelChangeFence({ catalog: deps.catalog, pollMs: deps.fencePollMs });
  }

  /**
   * Checks the request and starts the change; returns the base with model_change RUNNING. A model
   * the embedder does not know is InvalidInputError (the embedder's message names its catalog); a
   * change already running, the same model or chunks longer than the model reads are
   * FailedPreconditionError; a model that cannot be loaded fails the change at once, recorded.
   */
  async start(knowledgeBase: string, model: string): Promise<KnowledgeBase> {
    const { catalog, vectorizer } = this.deps;
    if (!model.trim()) throw new InvalidInputError("a change of embedding model needs the model's name");
    const kb = await catalog.getKnowledgeBase(knowledgeBase);
    if (this.running.has(kb.id) || kb.modelChange?.state === "running") {
      throw new FailedPreconditionError(`knowledge base ${kb.name} is already changing its embedding model to ${kb.modelChange?.targetModel ?? "another model"}`);
    }
    const started = new Date();
    let info;
    try {
      info = await vectorizer.modelInfo(model.trim());
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof InvalidInputError) throw new InvalidInputError((error as Error).message, { cause: error });
      // Known but not loadable (not installed, the embedder down): the base records why.
      await catalog.saveModelChange(kb.id, failedChange(kb, { model: model.trim(), dimension: 0 }, started, 0, error));
      throw error;
    }
    if (info.model === kb.embeddingModel) throw new FailedPreconditionError(`knowledge base ${kb.name} already uses ${info.model}`);
    if (kb.chunking.chunkSize > info.maxInputTokens) {
      throw new FailedPreconditionError(
        `knowledge base ${kb.name} has chunks of up to ${kb.chunking.chunkSize} tokens, more than ${info.model} reads (${info.maxInputTokens}); the chunks are kept as they are, so the new model must read them whole`,
      );
    }
    const lease = await this.deps.leases.tryAcquire(changeLease(kb.id));
    if (!lease) throw new FailedPreconditionError(`knowledge base ${kb.name} is already changing its embedding model on another index replica`);
    let total: number;
    try {
      total = (await catalog.listDocuments(kb.id)).length;
    } catch (error) {
      await lease.release();
      throw error;
    }
    const change: ModelChange = {
      targetModel: info.model,
      targetDimension: info.dimension,
      previousModel: kb.embeddingModel,
      state: "running",
      documentsDone: 0,
      documentsTotal: total,
      error: "",
      startedAt: started,
      updatedAt: started,
      switching: false,
      holder: this.deps.leases.owner,
    };
    let saved: KnowledgeBase;
    try {
      saved = await catalog.saveModelChange(kb.id, change);
    } catch (error) {
      await lease.release();
      throw error;
    }
    this.launch(kb.id, change, lease);
    return saved;
  }

  /**
   * Changes a restart (or a dead replica) interrupted start again from an empty shadow; a change
   * whose lease another live replica holds is that replica's and left alone.
   */
  async resumeInterrupted(): Promise<void> {
    for (const kb of await this.deps.catalog.listKnowledgeBases()) {
      if (this.closing) return;
      if (kb.modelChange?.state !== "running" || this.running.has(kb.id)) continue;
      const lease = await this.deps.leases.tryAcquire(changeLease(kb.id));
      if (!lease) continue;
      // Read again under the lease: the holder may have finished between the listing and the take-over.
      const now = await this.deps.catalog.getKnowledgeBase(kb.id, { counts: false }).catch(() => undefined);
      if (now?.modelChange?.state !== "running" || this.closing) {
        await lease.release();
        continue;
      }
      this.deps.logger.info({ knowledgeBaseId: kb.id, targetModel: now.modelChange.targetModel }, "resuming an interrupted change of embedding model");
      this.launch(kb.id, { ...now.modelChange, documentsDone: 0, switching: false, holder: this.deps.leases.owner }, lease);
    }
  }

  /**
   * Resumes interrupted changes now and then every half lease time limit, so a change whose owner
   * died is taken over by a live replica about one time limit later. Stopped by close().
   */
  watchInterrupted(): Promise<void> {
    const tick = async () => {
      await this.resumeInterrupted().catch((error: unknown) => this.deps.logger.warn({ err: error }, "could not look for interrupted changes of embedding model; trying again"));
      if (this.closing) return;
      this.resumeTimer = setTimeout(() => void tick(), Math.max(100, Math.floor(this.deps.leases.ttlMs / 2)));
      this.resumeTimer.unref();
    };
    return tick();
  }

  isSwitching(knowledgeBaseIds: string[]): boolean {
    return knowledgeBaseIds.some((id) => this.switches.has(id));
  }

  /** Resolves once no switch of these bases is in flight (a look-up or search waits for one to finish). */
  async notSwitching(knowledgeBaseIds: string[]): Promise<void> {
    await Promise.all(knowledgeBaseIds.map((id) => this.switches.get(id)));
  }

  /**
   * Stops the running changes between two documents and waits for them; they stay RUNNING in the
   * catalog, so the next start resumes them (a shutdown is no failure of the change).
   */
  async close(): Promise<void> {
    this.closing = true;
    this.closed.abort();
    clearTimeout(this.resumeTimer);
    await Promise.allSettled([...this.running.values()]);
  }

  /** Resolves when the base's running change (if any) has switched or failed. */
  async settled(knowledgeBaseId: string): Promise<void> {
    await this.running.get(knowledgeBaseId);
  }

  /**
   * The indexing stage's write of a document's chunks, embedded with `model`: vectors of another
   * model than the base's (embedded before a switch) are embedded again with the base's first.
   */
  async storeDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, model: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void> {
    // Shared with other documents' writes; a switch (exclusive) cannot fall between the model read and the write.
    await this.fence.write(knowledgeBaseId, [documentId], () => this.locks.shared(knowledgeBaseId, async () => {
      const kb = await this.deps.catalog.getKnowledgeBase(knowledgeBaseId, { counts: false });
      let stored = chunks;
      let storedDocumentVector = documentVector;
      if (model && model !== kb.embeddingModel && chunks.length > 0) {
        this.deps.logger.info({ documentId, model, current: kb.embeddingModel }, "chunks embedded with the base's previous model; embedding them again");
        const texts = [...chunks.map((c) => c.text), ...(documentVector ? [documentInput(chunks)] : [])];
        const vectors = await this.deps.vectorizer.embedDocuments(kb.embeddingModel, texts, kb.embeddingDimension);
        stored = chunks.map((chunk, i) => ({ ...chunk, vector: vectors[i] }));
        storedDocumentVector = documentVector && vectors[chunks.length];
      }
      await this.deps.engine.replaceDocumentChunks(knowledgeBaseId, documentId, fileName, stored, storedDocumentVector);
    }));
  }

  /**
   * The engine with its writes under the knowledge base's lock, for the index's other writers: a
   * document's writes share it with other documents', the change's steps hold it alone.
   */
  guard(engine: SearchEngine): SearchEngine {
    const locked = <T>(kb: string, fn: () => Promise<T>) => this.locks.exclusive(kb, fn);
    const shared = <T>(kb: string, fn: () => Promise<T>) => this.locks.shared(kb, fn);
    // A document's delete, flags and chunk edits, on whichever replica, reach the new model's space
    // too (an edit embedded with the old model that lands after a switch fails FAILED_PRECONDITION on
    // its dimension; the caller makes it again).
    const fenced = <T>(kb: string, doc: string, fn: () => Promise<T>) => this.fence.write(kb, [doc], () => this.locks.shared(kb, fn));
    return {
      ensureKnowledgeBase: (kb, dimension) => engine.ensureKnowledgeBase(kb, dimension),
      dropKnowledgeBase: (kb) => locked(kb, () => engine.dropKnowledgeBase(kb)),
      replaceDocumentChunks: (kb, doc, fileName, chunks, documentVector) => shared(kb, () => engine.replaceDocumentChunks(kb, doc, fileName, chunks, documentVector)),
      importDocuments: (kb, documents) => shared(kb, () => engine.importDocuments(kb, documents)),
      finishImport: (kb) => shared(kb, () => engine.finishImport(kb)),
      deleteDocument: (kb, doc) => fenced(kb, doc, () => engine.deleteDocument(kb, doc)),
      setDocumentEnabled: (kb, doc, enabled) => fenced(kb, doc, () => engine.setDocumentEnabled(kb, doc, enabled)),
      putChunk: (kb, doc, fileName, chunk) => fenced(kb, doc, () => engine.putChunk(kb, doc, fileName, chunk)),
      setChunkDisabled: async (kb, chunkId, disabled) => {
        const [chunk] = await engine.getChunks([chunkId]);
        // No such chunk: the engine says NotFound, and no document needs the change's attention.
        if (!chunk) return shared(kb, () => engine.setChunkDisabled(kb, chunkId, disabled));
        return fenced(kb, chunk.documentId, () => engine.setChunkDisabled(kb, chunkId, disabled));
      },
      search: (query) => engine.search(query),
      getChunks: (ids) => engine.getChunks(ids),
      getChunksAt: (positions) => engine.getChunksAt(positions),
      findChunks: (request) => engine.findChunks(request),
      close: () => engine.close(),
      documentChunks: (kb, doc) => engine.documentChunks(kb, doc),
      hasDocumentVector: (kb, doc) => engine.hasDocumentVector(kb, doc),
      documentWithVectors: (kb, doc) => engine.documentWithVectors(kb, doc),
      beginShadow: (kb, dimension) => locked(kb, () => engine.beginShadow(kb, dimension)),
      writeShadowChunks: (kb, doc, fileName, chunks, documentVector) => locked(kb, () => engine.writeShadowChunks(kb, doc, fileName, chunks, documentVector)),
      shadowPendingDocuments: (kb) => engine.shadowPendingDocuments(kb),
      commitShadow: (kb) => locked(kb, () => engine.commitShadow(kb)),
      dropShadow: (kb) => locked(kb, () => engine.dropShadow(kb)),
    };
  }

  private launch(knowledgeBaseId: string, change: ModelChange, lease: HeldLease): void {
    const run = this.run(knowledgeBaseId, change, lease)
      .finally(() => lease.release().catch((err: unknown) => this.deps.logger.warn({ err, knowledgeBaseId }, "could not release the change's lease; it expires")))
      .finally(() => this.running.delete(knowledgeBaseId));
    this.running.set(knowledgeBaseId, run);
  }

  private async run(knowledgeBaseId: string, change: ModelChange, lease: HeldLease): Promise<void> {
    const { catalog, engine, logger } = this.deps;
    let progress = change;
    let lastWrite = 0;
    const report = async (done: number, total: number, force = false) => {
      progress = { ...progress, documentsDone: done, documentsTotal: total, updatedAt: new Date() };
      if (!force && Date.now() - lastWrite < (this.deps.progressIntervalMs ?? 500)) return;
      lease.assertOwned();
      lastWrite = Date.now();
      await catalog.saveModelChange(knowledgeBaseId, progress);
    };
    try {
      await this.locks.exclusive(knowledgeBaseId, () => engine.beginShadow(knowledgeBaseId, change.targetDimension));
      // Marks of before are covered by the pass below, which reads every document after them.
      await catalog.clearModelChangeDocuments(knowledgeBaseId);
      const documents = await catalog.listDocuments(knowledgeBaseId);
      let done = 0;
      await report(0, documents.length, true);
      for (const doc of documents) {
        this.checkNotClosing(lease);
        await this.reembedPatiently(knowledgeBaseId, doc.id, doc.fileName, change, lease);
        await report(++done, documents.length);
      }
      // Switching: from here writes on every replica wait (or are written again after the switch),
      // so the marks listed now are all the documents written elsewhere since the pass began.
      this.checkNotClosing(lease);
      progress = { ...progress, switching: true, updatedAt: new Date() };
      await catalog.saveModelChange(knowledgeBaseId, progress);
      for (const documentId of await catalog.modelChangeDocuments(knowledgeBaseId)) {
        this.checkNotClosing(lease);
        const doc = await catalog.getDocument(documentId).catch((error: unknown) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
        await this.reembedPatiently(knowledgeBaseId, documentId, doc?.fileName ?? "", change, lease);
      }
      // Documents indexed (or replaced) while the pass ran lost their shadow vectors: embed them
      // again until none is missing, then switch under the lock, so no write slips in between.
      for (;;) {
        const pending = await this.locks.exclusive(knowledgeBaseId, async () => {
          const missing = await engine.shadowPendingDocuments(knowledgeBaseId);
          if (missing.length > 0) return missing;
          const total = (await catalog.listDocuments(knowledgeBaseId)).length;
          lease.assertOwned();
          // The swap and the catalog's switch back to back, and look-ups and searches of the base
          // wait for both (switching), so none sees the new vectors with the old model's name.
          await this.switching(knowledgeBaseId, async () => {
            await engine.commitShadow(knowledgeBaseId);
            await catalog.saveModelChange(knowledgeBaseId, { ...progress, state: "done", switching: false, documentsDone: total, documentsTotal: total, updatedAt: new Date() }, { switchModel: true });
          });
          return [];
        });
        if (pending.length === 0) break;
        for (const documentId of pending) {
          this.checkNotClosing(lease);
          const doc = await catalog.getDocument(documentId).catch((error: unknown) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
          await this.reembedPatiently(knowledgeBaseId, documentId, doc?.fileName ?? "", change, lease);
        }
      }
      await catalog.clearModelChangeDocuments(knowledgeBaseId).catch((err: unknown) => logger.warn({ err, knowledgeBaseId }, "could not clear the change's marked documents; the next change clears them"));
      logger.info({ knowledgeBaseId, model: change.targetModel, previous: change.previousModel }, "embedding model changed");
    } catch (error) {
      if (this.closing) return logger.info({ knowledgeBaseId, model: change.targetModel }, "change of embedding model stopped by shutdown; it resumes on the next start");
      // Another replica holds the lease now and runs the change from its own empty shadow.
      if (!lease.owned()) return logger.warn({ knowledgeBaseId, model: change.targetModel }, "change of embedding model stopped: its lease went to another index replica, which carries it on");
      if (error instanceof NotFoundError && !(await catalog.getKnowledgeBase(knowledgeBaseId).then(() => true, () => false))) {
        return logger.info({ knowledgeBaseId }, "knowledge base deleted during its change of embedding model");
      }
      logger.warn({ err: error, knowledgeBaseId, model: change.targetModel }, "change of embedding model failed; the previous model stays");
      await this.locks.exclusive(knowledgeBaseId, () => engine.dropShadow(knowledgeBaseId)).catch((err: unknown) => logger.warn({ err, knowledgeBaseId }, "could not drop the shadow"));
      await catalog
        .saveModelChange(knowledgeBaseId, { ...progress, state: "failed", switching: false, error: reason(error), updatedAt: new Date() })
        .catch((err: unknown) => logger.error({ err, knowledgeBaseId }, "could not record the failed change of embedding model"));
    }
  }

  /**
   * reembed, tried again while the embedder or the engine is unavailable: on a cluster a change
   * outlives the loss of an embedder replica or a search node, and failing it for good there would
   * throw away hours of re-embedding for a loss the rest of the system rides out in seconds. Every
   * other error (a wrong dimension, a model gone) fails the change at once.
   */
  private async reembedPatiently(knowledgeBaseId: string, documentId: string, fileName: string, change: ModelChange, lease: HeldLease): Promise<void> {
    const backoff = new Backoff({ initialMs: this.deps.retryInitialMs ?? 500, maxMs: this.deps.retryMaxMs ?? 10_000 });
    const giveUpAt = Date.now() + (this.deps.unavailableForMs ?? 300_000);
    for (;;) {
      try {
        return await this.reembed(knowledgeBaseId, documentId, fileName, change);
      } catch (error) {
        if (!(error instanceof UnavailableError) || Date.now() >= giveUpAt) throw error;
        this.deps.logger.warn({ err: error, knowledgeBaseId, documentId }, "re-embedding a document during a change of embedding model: unavailable; trying again");
        // A shutdown ends the pause (the change stays RUNNING and resumes on the next start).
        await sleep(backoff.next(), this.closed.signal).catch(() => {});
        this.checkNotClosing(lease);
      }
    }
  }

  /**
   * One document: read its live chunks, embed them outside the lock, store the vectors under it
   * only if the chunks are still the same (a replacement meanwhile is picked up as pending).
   */
  private async reembed(knowledgeBaseId: string, documentId: string, fileName: string, change: ModelChange): Promise<void> {
    const { engine, vectorizer } = this.deps;
    const chunks = await engine.documentChunks(knowledgeBaseId, documentId);
    // Deleted (on this replica or another): it leaves the shadow too.
    if (chunks.length === 0) {
      await this.locks.exclusive(knowledgeBaseId, async () => {
        if ((await engine.documentChunks(knowledgeBaseId, documentId)).length === 0) await engine.writeShadowChunks(knowledgeBaseId, documentId, fileName, []);
      });
      return;
    }
    // A document that had a document vector gets one of the new model, from the same input
    // rebuilt from its chunks (the chunks are kept as they are, so is the choice to have one).
    const whole = await engine.hasDocumentVector(knowledgeBaseId, documentId);
    const texts = [...chunks.map((c) => c.text), ...(whole ? [documentInput(chunks)] : [])];
    const vectors = await vectorizer.embedDocuments(change.targetModel, texts, change.targetDimension);
    await this.locks.exclusive(knowledgeBaseId, async () => {
      const now = await engine.documentChunks(knowledgeBaseId, documentId);
      if (now.map((c) => c.id).join("\n") !== chunks.map((c) => c.id).join("\n")) return;
      const embedded = chunks.map((chunk, i) => ({ ...chunk, vector: vectors[i] }));
      await engine.writeShadowChunks(knowledgeBaseId, documentId, fileName, embedded, whole ? vectors[chunks.length] : undefined);
    });
  }

  private checkNotClosing(lease: HeldLease): void {
    if (this.closing) throw new Error("shutting down");
    lease.assertOwned();
  }

  private async switching(knowledgeBaseId: string, fn: () => Promise<void>): Promise<void> {
    const run = fn();
    this.switches.set(knowledgeBaseId, run.catch(() => undefined));
    try {
      await run;
    } finally {
      this.switches.delete(knowledgeBaseId);
    }
  }
}

/** The lease whose holder runs a base's change of embedding model. */
export function changeLease(knowledgeBaseId: string): string {
  return `model-change:${knowledgeBaseId}`;
}

function failedChange(kb: KnowledgeBase, target: { model: string; dimension: number }, at: Date, total: number, error: unknown): ModelChange {
  return {
    targetModel: target.model,
    targetDimension: target.dimension,
    previousModel: kb.embeddingModel,
    state: "failed",
    documentsDone: 0,
    documentsTotal: total,
    error: reason(error),
    startedAt: at,
    updatedAt: at,
  };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
