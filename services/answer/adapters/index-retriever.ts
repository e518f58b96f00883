// Retrieval over Connect: the knowledge bases and the search from the index service, the question's
// vector from the embedder service. The answer service's only adapter to its peers.
import { getMaxListeners, setMaxListeners } from "node:events";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { EmbedderService, EmbeddingKind } from "../../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { assertDimension } from "../../../lib/dimension-check.ts";
import { ErrorReasons, hasReason, throwIfCancelled } from "../../../lib/errors.ts";
import type { KnowledgeBase, RetrievalMode, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { chunkFromProto, hitFromProto, knowledgeBaseFromProto, searchToProto } from "../../../lib/proto-convert.ts";
import { toDomainError } from "../../../lib/rpc/error-mapping.ts";
import type { OpenedRetrieval, Retriever } from "../answer-service.ts";
import type { QueryEmbedding } from "../retrieval/retrieval-stage.ts";

/** A question's vector with what produced it, so a dimension mismatch can name the model. */
interface EmbeddedQuestion extends QueryEmbedding {
  text: string;
  /** The model asked for ("" for the embedder's default). */
  requested: string;
  model: string;
}

/** Listeners one retrieval's signal may hold before Node warns: calls in flight at once, with room. */
const PEER_CALLS_PER_SIGNAL = 64;

export class IndexRetriever implements Retriever {
  /** Each knowledge base's model as last looked up (by the name it was asked by), for embedEarly. */
  private readonly modelOf = new Map<string, string>();

  constructor(private readonly peers: { index: Client<typeof IndexService>; embedder: Client<typeof EmbedderService> }) {}

  /**
   * Every peer call carries the signal: a caller gone before a call is made costs no call, and one
   * gone during it ends it (the index drops a search still waiting for a read thread).
   */
  async open(question: string, mode: RetrievalMode, names: string[], signal?: AbortSignal): Promise<OpenedRetrieval> {
    throwIfCancelled(signal, "retrieval");
    // One question fans out to many peer calls (multi-query, one search per variant, chunk reads),
    // each listening on the same signal while it runs; Node warns past 10 as if it were a leak.
    if (signal && getMaxListeners(signal) < PEER_CALLS_PER_SIGNAL) setMaxListeners(PEER_CALLS_PER_SIGNAL, signal);
    const early = this.embedEarly(question, mode, names, signal);
    const knowledgeBases = await this.lookUp(names, signal);
    return { knowledgeBases, deps: this.depsFor(knowledgeBases, early, signal) };
  }

  async embedForSupport(texts: string[]): Promise<QueryEmbedding[]> {
    const res = await this.peers.embedder.embed({ texts, kind: EmbeddingKind.DOCUMENT });
    return res.vectors.map((v) => ({ vector: Float32Array.from(v.values), knownTokenShare: v.knownTokenShare }));
  }

  private async lookUp(names: string[], signal?: AbortSignal): Promise<KnowledgeBase[]> {
    const index = this.peers.index;
    // One call for all of them: a call per base cost a 20-base Search twenty in-process round trips
    // (abort signals, interceptors, encoding) on the main thread (docs/benchmarks/stall.md).
    const listed = (await index.listKnowledgeBases({ knowledgeBases: names }, { signal })).knowledgeBases;
    // An index from before the filter answers with every base: then each is asked for as before.
    const found = listed.length === names.length && listed.every((kb, i) => kb.id === names[i] || kb.name === names[i]);
    const protos = found ? listed : await Promise.all(names.map(async (n) => (await index.getKnowledgeBase({ knowledgeBase: n }, { signal })).knowledgeBase!));
    const kbs = protos.map(knowledgeBaseFromProto);
    if (this.modelOf.size > 10_000) this.modelOf.clear();
    kbs.forEach((kb, i) => this.modelOf.set(names[i], kb.embeddingModel));
    return kbs;
  }

  private async embedQuestion(question: string, model = "", signal?: AbortSignal): Promise<EmbeddedQuestion> {
    const res = await this.peers.embedder.embed({ texts: [question], kind: EmbeddingKind.QUERY, model }, { signal });
    return { text: question, requested: model, model: res.model, vector: Float32Array.from(res.vectors[0].values), knownTokenShare: res.vectors[0].knownTokenShare };
  }

  /**
   * Starts embedding the question while the knowledge bases are still being looked up: the two do
   * not depend on each other, and a hybrid search otherwise pays for both one after the other. The
   * question has been accepted already, so a refused one costs no model time. The model is the one
   * the bases had when last looked up (the embedder's default for bases not seen yet); a guess that
   * turns out wrong is embedded again with the right model.
   */
  private embedEarly(question: string, mode: RetrievalMode, names: string[], signal?: AbortSignal): Promise<EmbeddedQuestion> | undefined {
    if (mode === "bm25") return undefined;
    const models = new Set(names.map((n) => this.modelOf.get(n) ?? ""));
    if (models.size !== 1) return undefined;
    const early = this.embedQuestion(question, [...models][0], signal);
    early.catch(() => {}); // Awaited (and its error reported) by retrieval; unawaited if the lookup fails first.
    return early;
  }

  private depsFor(kbs: KnowledgeBase[], early: Promise<EmbeddedQuestion> | undefined, signal: AbortSignal | undefined): OpenedRetrieval["deps"] {
    // What each vector handed out was embedded from, so a search refused for a model switched since
    // the look-up can embed the same text again with the new model.
    const embeddedFrom = new WeakMap<Float32Array, string>();
    return {
      embed: async (question, model = kbs[0].embeddingModel) => {
        const started = await early?.catch((err: unknown) => {
          throw toDomainError(err);
        });
        const embedded =
          started?.text === question && (started.model === model || started.requested === model) ? started : await domainErrors(() => this.embedQuestion(question, model, signal));
        const kb = kbs.find((k) => k.embeddingModel === model) ?? kbs[0];
        assertDimension([embedded.vector], kb.embeddingDimension, {
          knowledgeBase: kb.name,
          expectedModel: kb.embeddingModel,
          actualModel: embedded.model,
        });
        embeddedFrom.set(embedded.vector, question);
        return { vector: embedded.vector, knownTokenShare: embedded.knownTokenShare };
      },
      search: async (q) => {
        try {
          return await this.search(q, signal);
        } catch (error) {
          const text = q.vector && embeddedFrom.get(q.vector);
          if (!text || !hasReason(error, ErrorReasons.staleQueryVector)) throw error;
          return this.searchWithCurrentModel(q, text, signal, error);
        }
      },
      // What answers read beside a hit (neighbours, a parent's children): never a chunk disabled by
      // hand, which search would not return either (a parent missing one is then not read whole).
      chunksAt: async (positions) => {
        const res = await domainErrors(() => this.peers.index.getChunks({ positions }, { signal }));
        return res.chunks.filter((c) => !c.disabled).map(chunkFromProto);
      },
    };
  }

  private async search(q: SearchQuery, signal: AbortSignal | undefined): Promise<SearchHit[]> {
    const res = await domainErrors(() => this.peers.index.search(searchToProto(q), { signal }));
    return res.hits.map(hitFromProto);
  }

  /**
   * A base that switched its embedding model between the look-up and the search (the end of
   * ChangeEmbeddingModel) refuses the old model's vector: looked up again, the same text is embedded
   * with the model the bases have now and searched once more. Every path that searches (Search,
   * chat turns, the debugger, each HyDE or multi-query variant) goes through here. Bases that now
   * differ in model cannot share one vector: the refusal stands.
   */
  private async searchWithCurrentModel(q: SearchQuery, text: string, signal: AbortSignal | undefined, refusal: unknown): Promise<SearchHit[]> {
    const current = await this.lookUp(q.knowledgeBaseIds, signal);
    const models = new Set(current.map((kb) => kb.embeddingModel));
    if (models.size !== 1) throw refusal;
    const embedded = await domainErrors(() => this.embedQuestion(text, current[0].embeddingModel, signal));
    assertDimension([embedded.vector], current[0].embeddingDimension, {
      knowledgeBase: current[0].name,
      expectedModel: current[0].embeddingModel,
      actualModel: embedded.model,
    });
    return this.search({ ...q, vector: embedded.vector }, signal);
  }
}

/**
 * Calls a peer, turning its errors into the domain errors they stand for, so retrieval can tell an
 * outage (degrade to keyword search) from a refusal (report it).
 */
export async function domainErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toDomainError(err);
  }
}
