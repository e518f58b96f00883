// What embedding one text per pass costs and gives for a model that quantizes its activations per
// pass (onnx-embedder.ts, quantizesPerPass): the set's documents embedded twice with the same model,
// once in shared passes as before (up to 32 texts, longest first) and once a text per pass (the
// rule), each handed over in calls of 256 as ingestion does, the arms alternating call by call so
// both see the same machine load. Reported: each arm's embedding time, how far a text's shared-pass
// vector strays from its own (the lowest and median cosine), and each arm's vector-only nDCG@10
// over the documents (exact cosine, questions embedded alone as search embeds them). Documents are
// embedded whole as far as the model reads them (title and text), not cut by the chunker.
//
//   node --import tsx eval/pass-quantization-study.ts --dataset ../shared/eval/cmedir-public --model bge-small-zh-v1.5
//   node --import tsx eval/pass-quantization-study.ts --dataset ../shared/eval/scifact --model bge-small-en-v1.5 --docs 2000
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { loadBeirDataset } from "./beir-dataset.ts";
import { summarize } from "./metrics.ts";

const CALL_TEXTS = 256;

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += a[d] * b[d];
  return sum;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dataset: { type: "string" }, model: { type: "string" }, docs: { type: "string" } } });
  if (!values.dataset || !values.model) throw new Error("usage: pass-quantization-study.ts --dataset DIR --model NAME [--docs N]");
  if (!existsSync(resolve(values.dataset))) {
    process.stderr.write(`*** SKIPPED: pass-quantization-study.ts did not run: ${values.dataset} is not there (the shared material beside the clone, ../shared) ***\n`);
    process.exitCode = 1;
    return;
  }
  const set = await loadBeirDataset(resolve(values.dataset), { limitDocs: values.docs === undefined ? undefined : Number(values.docs) });
  const texts = set.corpus.map((d) => (d.title ? `${d.title}\n\n${d.text}` : d.text));
  const [own, shared] = await Promise.all([
    OnnxEmbedder.load(defaultModelDir(values.model)),
    OnnxEmbedder.load(defaultModelDir(values.model), { batchQuantized: true }),
  ]);
  try {
    const arms = [
      { name: "shared passes", embedder: shared, vectors: [] as Float32Array[], ms: 0 },
      { name: "a text per pass", embedder: own, vectors: [] as Float32Array[], ms: 0 },
    ];
    for (let i = 0, call = 0; i < texts.length; i += CALL_TEXTS, call++) {
      for (const arm of call % 2 === 0 ? arms : [...arms].reverse()) {
        const started = performance.now();
        arm.vectors.push(...(await arm.embedder.embed(texts.slice(i, i + CALL_TEXTS), "document")));
        arm.ms += performance.now() - started;
      }
    }
    const questions: Float32Array[] = [];
    for (const q of set.queries) questions.push((await own.embed([q.text], "query"))[0]);
    const cosines = texts.map((_, i) => dot(arms[0].vectors[i], arms[1].vectors[i])).sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        dataset: values.dataset,
        model: values.model,
        documents: texts.length,
        questions: set.queries.length,
        textsPerPass: { shared: shared.textsPerPass, own: own.textsPerPass },
        cosineToOwn: { min: round(cosines[0]), median: round(cosines[Math.floor(cosines.length / 2)]) },
        embedSecondsRatio: round(arms[1].ms / arms[0].ms),
      }),
    );
    for (const arm of arms) {
      const runs = new Map<string, string[]>();
      set.queries.forEach((q, qi) => {
        const scored = arm.vectors.map((v, i) => [dot(v, questions[qi]), i] as const).sort((a, b) => b[0] - a[0]);
        runs.set(q.id, scored.slice(0, 100).map(([, i]) => set.corpus[i].id));
      });
      const metrics = summarize(set.qrels, runs);
      console.log(JSON.stringify({ arm: arm.name, embedSeconds: round(arm.ms / 1000), ndcgAt10: round(metrics.ndcgAt10), recallAt100: round(metrics.recallAt100) }));
    }
  } finally {
    await Promise.all([own.close(), shared.close()]);
  }
}

const round = (n: number) => Math.round(n * 10000) / 10000;

if (import.meta.url === `file://${process.argv[1]}`) await main();
