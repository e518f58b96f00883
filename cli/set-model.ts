// `quarry kb set-model KB MODEL`: starts a change of embedding model and, unless told not to wait,
// follows it through GetKnowledgeBase's model_change until it switches or fails.
import { setTimeout as sleep } from "node:timers/promises";
import { ModelChangeState, type KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";

export interface SetModelOptions {
  wait: boolean;
  out: NodeJS.WritableStream;
  pollMs?: number;
}

/** Resolves true when the base switched (or, without wait, when the change started). */
export async function setModel(client: QuarryClient, knowledgeBase: string, model: string, options: SetModelOptions): Promise<boolean> {
  const { out } = options;
  let kb = (await client.changeEmbeddingModel({ knowledgeBase, embeddingModel: model })).knowledgeBase!;
  const change = kb.modelChange!;
  out.write(`${kb.name}: re-embedding ${change.documentsTotal} document(s) with ${change.targetModel} (${change.targetDimension} dims); searches use ${change.previousModel} until the switch\n`);
  if (!options.wait) return true;
  let last = "";
  for (;;) {
    kb = (await client.getKnowledgeBase({ knowledgeBase: kb.id })).knowledgeBase!;
    const line = progressLine(kb);
    if (line !== last) out.write(`${line}\n`);
    last = line;
    const state = kb.modelChange?.state;
    if (state === ModelChangeState.DONE) return true;
    if (state !== ModelChangeState.RUNNING) return false;
    await sleep(options.pollMs ?? 500);
  }
}

export function progressLine(kb: KnowledgeBase): string {
  const c = kb.modelChange;
  if (!c) return `${kb.name}: ${kb.embeddingModel}, no change of model`;
  switch (c.state) {
    case ModelChangeState.RUNNING:
      return `${kb.name}: ${c.documentsDone}/${c.documentsTotal} documents re-embedded with ${c.targetModel}`;
    case ModelChangeState.DONE:
      return `${kb.name}: switched from ${c.previousModel} to ${kb.embeddingModel} (${kb.embeddingDimension} dims)`;
    default:
      return `${kb.name}: the change to ${c.targetModel} failed, ${kb.embeddingModel} stays: ${c.error}`;
  }
}
