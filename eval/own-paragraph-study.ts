// The extractive answerer's sentence choice alone: each dev question answered from its own judged
// paragraphs (each a whole document, under its title), no retrieval and no gate, so a change to how
// sentences are chosen is measured on every dev question in under a minute. Held-out questions are
// never read.
//
//   npx tsx eval/own-paragraph-study.ts --dataset ../shared/eval/cmrc2018-public [--misses]
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { extractiveAnswer, EXTRACTIVE_NOTICES, type ContextChunk } from "../services/answer/index.ts";
import { answerBody, containsGold, median } from "./answer-metrics.ts";
import { readAnswers, readCorpus, readQrels, readQueries } from "./beir-dataset.ts";
import { selectSplit } from "./unanswerable.ts";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dataset: { type: "string" }, misses: { type: "boolean" } } });
  if (!values.dataset) throw new Error("usage: own-paragraph-study.ts --dataset DIR [--misses]");
  const dir = resolve(values.dataset);
  if (!existsSync(dir)) {
    process.stderr.write(`*** SKIPPED: own-paragraph-study.ts did not run: ${values.dataset} is not there (the shared material beside the clone, ../shared; pass --dataset DIR) ***\n`);
    process.exitCode = 1;
    return;
  }
  const golds = await readAnswers(dir);
  const queries = selectSplit((await readQueries(dir)).filter((q) => golds.has(q.id)), "dev");
  const qrels = await readQrels(dir);
  const documents = new Map<string, { title: string; text: string }>();
  for await (const d of readCorpus(dir)) documents.set(d.id, d);
  let hits = 0;
  const lengths: number[] = [];
  const misses: string[] = [];
  for (const q of queries) {
    const context: ContextChunk[] = [...(qrels.get(q.id)?.keys() ?? [])]
      .filter((id) => documents.has(id))
      .map((id, i) => {
        const { title, text } = documents.get(id)!;
        const chunk = { id, documentId: id, knowledgeBaseId: "", index: 0, text, tokenCount: 0, page: 0, pageEnd: 0, sectionPath: [title], start: 0, end: text.length };
        // No lists ranked it: a whole paragraph handed to the answerer as it is.
        const explain = { bm25Rank: 0, bm25Score: 0, vectorRank: 0, vectorScore: 0, fusedScore: 0 };
        return { number: i + 1, tokens: 0, hit: { fileName: id, score: 0, explain, chunk } };
      });
    const body = answerBody(extractiveAnswer(q.text, context).text, EXTRACTIVE_NOTICES);
    lengths.push([...body].length);
    if (containsGold(body, golds.get(q.id)!)) hits++;
    else if (values.misses) misses.push(JSON.stringify({ id: q.id, question: q.text, golds: golds.get(q.id), answer: body }));
  }
  console.log(JSON.stringify({ split: "dev", questions: queries.length, answer_hit_rate: Math.round((hits / queries.length) * 10000) / 10000, median_answer_chars: median(lengths) }));
  for (const line of misses) console.log(line);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
