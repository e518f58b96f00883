// Records each catalog model's score distribution on its own evaluation sets into
// lib/models/recorded-scores.ts (read by the model catalog, served with each knowledge base, and
// turned into the console's score bands). Kept cheap: per set, a hash-chosen sample of questions,
// the passages judged relevant to them, and a hash-chosen sample of the others as distractors (the
// other questions' relevant passages are distractors too, so many are on topic). A passage is the
// document as BEIR gives it (title, a space, the text), read up to the model's input length.
//
//   node --import tsx eval/model-scores.ts            # print the distributions
//   node --import tsx eval/model-scores.ts --write    # and write them into the catalog
//   node --import tsx eval/model-scores.ts --model bge-small-en-v1.5 --questions 50
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ScoreDistribution } from "../lib/models/model-catalog.ts";
import { RECORDED_SCORES } from "../lib/models/recorded-scores.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { loadBeirDataset } from "./beir-dataset.ts";
import { questionScores, sampleByHash, scoreDistribution, type QuestionScores } from "./score-distribution.ts";

/** Each catalog model and the public sets of the language it is for. */
export const MODEL_SETS: Record<string, string[]> = {
  "all-MiniLM-L6-v2-int8": ["scifact", "arguana-public"],
  "bge-small-en-v1.5": ["scifact", "arguana-public"],
  "bge-small-zh-v1.5": ["cmrc2018-public", "cmedir-public"],
};

const { values } = parseArgs({
  options: {
    eval: { type: "string", default: resolve(import.meta.dirname, "../../shared/eval") },
    model: { type: "string", multiple: true },
    questions: { type: "string", default: "200" },
    distractors: { type: "string", default: "300" },
    threads: { type: "string", default: "1" },
    write: { type: "boolean", default: false },
  },
});

/** The sets live in ../shared/eval, which a clone alone does not have: say so in one line, not a stack trace. */
async function requireSets(dir: string, sets: string[]): Promise<void> {
  const missing = sets.filter((set) => !existsSync(join(dir, set, "corpus.jsonl")));
  if (missing.length === 0) return;
  process.stderr.write(`model-scores: ${missing.join(", ")} not found under ${dir} (the public evaluation sets, ../shared/eval beside the clone; --eval DIR names another folder)\n`);
  process.exit(1);
}

async function measure(model: string, sets: string[]): Promise<ScoreDistribution> {
  await requireSets(values.eval!, sets);
  const embedder = await OnnxEmbedder.load(defaultModelDir(model), { threads: Number(values.threads) });
  try {
    const measured: { name: string; documents: number; scores: QuestionScores[] }[] = [];
    for (const set of sets) {
      const dataset = await loadBeirDataset(join(values.eval!, set));
      const questions = sampleByHash(dataset.queries, (q) => q.id, Number(values.questions));
      const relevant = new Set(questions.flatMap((q) => [...dataset.qrels.get(q.id)!.keys()]));
      const others = sampleByHash(
        dataset.corpus.filter((d) => !relevant.has(d.id)),
        (d) => d.id,
        Number(values.distractors),
      );
      const passages = [...dataset.corpus.filter((d) => relevant.has(d.id)), ...others];
      process.stderr.write(`${model} on ${set}: ${questions.length} questions, ${passages.length} passages\n`);
      const questionVectors = await embedder.embed(
        questions.map((q) => q.text),
        "query",
      );
      const passageVectors = await embedder.embed(
        passages.map((d) => `${d.title} ${d.text}`.trim()),
        "document",
      );
      const scores = questionScores(
        questions.map((q, i) => ({ id: q.id, vector: questionVectors[i] })),
        passages.map((d, i) => ({ id: d.id, vector: passageVectors[i] })),
        dataset.qrels,
      );
      measured.push({ name: set, documents: passages.length, scores });
    }
    return scoreDistribution(measured);
  } finally {
    await embedder.close();
  }
}

const models = values.model ?? Object.keys(MODEL_SETS);
// A run for some models keeps the others' recorded figures.
const recorded: Record<string, ScoreDistribution> = { ...RECORDED_SCORES };
for (const model of models) {
  const sets = MODEL_SETS[model];
  if (!sets) throw new Error(`no evaluation sets are named for ${model}; known: ${Object.keys(MODEL_SETS).join(", ")}`);
  recorded[model] = await measure(model, sets);
  process.stdout.write(`${model}: ${JSON.stringify(recorded[model])}\n`);
}

if (values.write) {
  const file = resolve(import.meta.dirname, "../lib/models/recorded-scores.ts");
  const header = [
    "// Written by `node --import tsx eval/model-scores.ts --write`; do not edit by hand.",
    `// Sample: ${values.questions} questions and ${values.distractors} distractor passages a set.`,
    'import type { ScoreDistribution } from "./score-distribution.ts";',
    "",
  ];
  await writeFile(file, `${header.join("\n")}\nexport const RECORDED_SCORES: Readonly<Record<string, ScoreDistribution>> = ${JSON.stringify(recorded, null, 2)};\n`);
  process.stderr.write(`wrote ${file}\n`);
}
