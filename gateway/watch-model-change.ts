// WatchModelChange: a base's change of embedding model as a stream of progress events. The change
// runs in the index, which records its progress in the catalog (at most every half second), so the
// gateway follows the catalog: the same in the embedded and the distributed deployment, and right
// whichever index process runs the change.
import { setTimeout as sleep } from "node:timers/promises";
import { ModelChangeState, type KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import { ModelChangePhase } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { UnavailableError } from "../lib/errors.ts";

export interface ModelChangeUpdate {
  knowledgeBaseId: string;
  phase: ModelChangePhase;
  change: KnowledgeBase["modelChange"];
  message: string;
}

export interface ModelChangeSource {
  /** The base as the catalog has it now. */
  read(): Promise<KnowledgeBase>;
  pollMs?: number;
  signal?: AbortSignal;
}

/** Yields the current state, then every change of it, until the change is done or failed (UNAVAILABLE if the server stops first). */
export async function* watchModelChange(source: ModelChangeSource): AsyncGenerator<ModelChangeUpdate> {
  let last = "";
  while (!source.signal?.aborted) {
    const update = describe(await source.read());
    const key = `${update.phase}\n${update.message}`;
    if (key !== last) yield update;
    last = key;
    if (update.phase !== ModelChangePhase.REEMBEDDING && update.phase !== ModelChangePhase.SWITCHING) return;
    await sleep(source.pollMs ?? 300, undefined, { signal: source.signal }).catch(() => undefined);
  }
  // Only a change still running gets here: the server is going away, and a clean end would read as "done".
  throw new UnavailableError("Quarry is shutting down while the change of model runs; watch again to follow it");
}

export function describe(kb: KnowledgeBase): ModelChangeUpdate {
  const c = kb.modelChange;
  const base = { knowledgeBaseId: kb.id, change: c };
  if (!c) return { ...base, phase: ModelChangePhase.NONE, message: `${kb.embeddingModel}, no change of model` };
  switch (c.state) {
    case ModelChangeState.RUNNING:
      // Every document has its new vectors: what is left is catching up with late writes and the swap.
      return c.documentsDone >= c.documentsTotal
        ? { ...base, phase: ModelChangePhase.SWITCHING, message: `all ${c.documentsTotal} documents re-embedded with ${c.targetModel}; switching` }
        : { ...base, phase: ModelChangePhase.REEMBEDDING, message: `${c.documentsDone}/${c.documentsTotal} documents re-embedded with ${c.targetModel}` };
    case ModelChangeState.DONE:
      return { ...base, phase: ModelChangePhase.DONE, message: `switched from ${c.previousModel} to ${kb.embeddingModel} (${kb.embeddingDimension} dims)` };
    default:
      return { ...base, phase: ModelChangePhase.FAILED, message: `the change to ${c.targetModel} failed, ${kb.embeddingModel} stays: ${c.error}` };
  }
}
