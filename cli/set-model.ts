// `quarry kb set-model KB MODEL`: starts a change of embedding model and, unless told not to wait,
// follows it through the gateway's WatchModelChange stream until it switches or fails.
import { ModelChangePhase } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";

export interface SetModelOptions {
  wait: boolean;
  out: NodeJS.WritableStream;
}

/** Resolves true when the base switched (or, without wait, when the change started). */
export async function setModel(client: QuarryClient, knowledgeBase: string, model: string, options: SetModelOptions): Promise<boolean> {
  const { out } = options;
  const kb = (await client.changeEmbeddingModel({ knowledgeBase, embeddingModel: model })).knowledgeBase!;
  const change = kb.modelChange!;
  out.write(`${kb.name}: re-embedding ${change.documentsTotal} document(s) with ${change.targetModel} (${change.targetDimension} dims); searches use ${change.previousModel} until the switch\n`);
  if (!options.wait) return true;
  let phase = ModelChangePhase.UNSPECIFIED;
  for await (const update of client.watchModelChange({ knowledgeBase: kb.id })) {
    out.write(`${kb.name}: ${update.message}\n`);
    phase = update.phase;
  }
  return phase === ModelChangePhase.DONE;
}
