// How an evaluation prints: a side-by-side table for a person (with the machine it ran on, since
// latency means nothing without it) or one JSON object per backend and mode for scripts.
import { cpus, totalmem } from "node:os";
import type { EvalResult } from "./run-eval.ts";

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return { cpus: list.length, cpuModel: list[0]?.model.trim() ?? "unknown", memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10, node: process.version };
}

export interface RunContext {
  dataset: string;
  queries: number;
  corpusSize: number;
  ingestSeconds: Record<string, number>;
  /** The knowledge base's embedding model, as Quarry reports it. */
  embeddingModel?: string;
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

export function formatTable(results: readonly EvalResult[], context: RunContext, machine: MachineInfo = machineInfo()): string {
  const lines = [
    `quarry eval — ${context.dataset}: ${context.queries} judged queries, ${results[0]?.docs ?? 0} of ${context.corpusSize} documents ingested`,
    ...(context.embeddingModel ? [`embedding model: ${context.embeddingModel}`] : []),
    `machine: ${machine.cpus} cpus (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, node ${machine.node}`,
    ...Object.entries(context.ingestSeconds).map(
      ([backend, s]) => {
        const r = results.find((x) => x.backend === backend);
        return `ingest (${backend}): ${fixed(s, 1)} s, ${r?.docs ?? 0} documents, ${r?.chunks ?? 0} chunks${r?.failedDocs ? `, ${r.failedDocs} FAILED` : ""}`;
      },
    ),
    "",
  ];
  const header = ["backend", "mode", "nDCG@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms"];
  const rows = results.map((r) => [r.backend, r.mode, fixed(r.ndcgAt10, 4), fixed(r.recallAt100, 4), fixed(r.mrrAt10, 4), fixed(r.p50Ms, 1), fixed(r.p95Ms, 1)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const render = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  lines.push(render(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(render));
  return lines.join("\n") + "\n";
}

/** One JSON object per line, snake_case as the issue asks; numbers unrounded. */
export function jsonLine(result: EvalResult, context: RunContext, machine: MachineInfo = machineInfo()): string {
  return JSON.stringify({
    dataset: context.dataset,
    embedding_model: context.embeddingModel,
    backend: result.backend,
    mode: result.mode,
    ndcg_at_10: result.ndcgAt10,
    recall_at_100: result.recallAt100,
    mrr_at_10: result.mrrAt10,
    p50_ms: result.p50Ms,
    p95_ms: result.p95Ms,
    queries: result.queries,
    docs: result.docs,
    chunks: result.chunks,
    failed_docs: result.failedDocs,
    ingest_seconds: context.ingestSeconds[result.backend] ?? null,
    cpus: machine.cpus,
    memory_gib: machine.memoryGiB,
  });
}
