// How the managed-corrections gate (services/answer/correction-match.ts) was set: a correction
// must answer a paraphrase of its question and must not answer a different question about the same
// subject. Both kinds of pair are written in eval/fixtures/correction-paraphrases.json (no reachable
// dataset has question paraphrases); CMRC 2018's questions written for the same paragraph are a
// larger set of different Chinese questions on one subject. (SciFact's claims that cite one
// abstract are mostly a claim and its negation, the same question as far as a correction goes, so
// they are no use here.) Prints, per model and for the content-word overlap, both distributions and each
// threshold's share of paraphrases matched and of other questions matched by mistake.
//
//   node --import tsx eval/correction-gate-study.ts [--shared ../shared] [--limit 600]
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cosine, termOverlap } from "../services/answer/index.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";

const { values } = parseArgs({ options: { shared: { type: "string", default: "../shared" }, limit: { type: "string", default: "600" } } });
const limit = Number(values.limit);
type Pairs = [string, string][];
const set = JSON.parse(await readFile(new URL("./fixtures/correction-paraphrases.json", import.meta.url), "utf8")) as Record<"en" | "zh" | "en_other" | "zh_other", Pairs>;

async function lines(path: string): Promise<Record<string, string>[]> {
  return (await readFile(path, "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** Pairs of distinct queries whose relevant document is the same one. */
async function sameSubjectPairs(dir: string, qrelFiles: string[], queryFiles: string[]): Promise<[string, string][]> {
  const text = new Map<string, string>();
  for (const f of queryFiles) for (const q of await lines(join(dir, f))) text.set(q._id, q.text);
  const byDoc = new Map<string, string[]>();
  for (const f of qrelFiles) {
    for (const row of (await readFile(join(dir, "qrels", f), "utf8")).split("\n").slice(1)) {
      const [query, doc] = row.split("\t");
      if (!query || !text.has(query)) continue;
      byDoc.set(doc, [...(byDoc.get(doc) ?? []), query]);
    }
  }
  const pairs: [string, string][] = [];
  for (const queries of byDoc.values()) {
    const unique = [...new Set(queries)];
    for (let i = 0; i < unique.length; i++) for (let j = i + 1; j < unique.length; j++) pairs.push([text.get(unique[i])!, text.get(unique[j])!]);
    if (pairs.length >= limit) break;
  }
  return pairs.slice(0, limit);
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
};
const share = (xs: number[], t: number) => xs.filter((x) => x >= t).length / xs.length;
const f = (x: number) => x.toFixed(3);

function report(label: string, positives: number[], negatives: number[], thresholds: number[]) {
  console.log(`\n${label}: ${positives.length} paraphrase pairs, ${negatives.length} same-subject pairs`);
  console.log(`  paraphrases   min ${f(Math.min(...positives))}  p10 ${f(quantile(positives, 0.1))}  median ${f(quantile(positives, 0.5))}`);
  console.log(`  same subject  median ${f(quantile(negatives, 0.5))}  p99 ${f(quantile(negatives, 0.99))}  max ${f(Math.max(...negatives))}`);
  console.log("  threshold  paraphrases matched  same-subject matched");
  for (const t of thresholds) console.log(`  ${t.toFixed(2)}       ${(share(positives, t) * 100).toFixed(1).padStart(5)}%               ${(share(negatives, t) * 100).toFixed(2).padStart(5)}%`);
}

async function similarities(model: string, pairs: [string, string][]): Promise<number[]> {
  const embedder = await OnnxEmbedder.load(defaultModelDir(model), { threads: 1 });
  try {
    const out: number[] = [];
    for (let i = 0; i < pairs.length; i += 32) {
      const batch = pairs.slice(i, i + 32);
      const vectors = await embedder.embed(batch.flat(), "query");
      for (let j = 0; j < batch.length; j++) out.push(cosine(vectors[2 * j], vectors[2 * j + 1]));
    }
    return out;
  } finally {
    await embedder.close();
  }
}

const cmrc = join(values.shared!, "eval", "cmrc2018-public");
// The written pairs are the study; CMRC's same-paragraph questions only add a larger Chinese check,
// so without the shared material that part is skipped, loudly (and refused where it is required).
const haveCmrc = existsSync(cmrc);
if (!haveCmrc) {
  const line = `*** SKIPPED: the CMRC 2018 comparison: ${cmrc} not found (pass --shared DIR) ***`;
  if (process.env.QUARRY_REQUIRE_SHARED === "1") throw new Error(line);
  console.error(line);
}
const cmrcPairs = haveCmrc ? await sameSubjectPairs(cmrc, ["test.tsv"], ["queries.jsonl"]) : [];
const thresholds = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

for (const model of ["all-MiniLM-L6-v2-int8", "bge-small-en-v1.5"]) {
  report(`${model}, English (written pairs)`, await similarities(model, set.en), await similarities(model, set.en_other), thresholds);
}
const zh = await similarities("bge-small-zh-v1.5", set.zh);
report("bge-small-zh-v1.5, Chinese (written pairs)", zh, await similarities("bge-small-zh-v1.5", set.zh_other), thresholds);
if (haveCmrc) report("bge-small-zh-v1.5, Chinese paraphrases vs CMRC 2018 questions on one paragraph", zh, await similarities("bge-small-zh-v1.5", cmrcPairs), thresholds);
const overlap = (pairs: [string, string][]) => pairs.map(([a, b]) => termOverlap(a, b));
const dice = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
report("content-word overlap (Dice), English", overlap(set.en), overlap(set.en_other), dice);
report("content-word overlap (Dice), Chinese (written pairs)", overlap(set.zh), overlap(set.zh_other), dice);
if (haveCmrc) report("content-word overlap (Dice), Chinese paraphrases vs CMRC 2018", overlap(set.zh), overlap(cmrcPairs), dice);
