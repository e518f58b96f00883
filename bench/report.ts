// Markdown tables for the bench reports, the same text the command prints and BENCHMARKS.md quotes.
import type { ChatBenchReport } from "./bench-chat.ts";
import type { IngestBenchReport } from "./bench-ingest.ts";
import type { QueryBenchReport } from "./bench-query.ts";
import { machineLine } from "./machine.ts";
import type { LatencySummary } from "./percentiles.ts";
import { lineChartSvg } from "./svg-chart.ts";

const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const pct = (s: LatencySummary) => `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.p99)}`;
const goal = (ok: boolean) => (ok ? "met" : "**missed**");

export function formatIngestReport(r: IngestBenchReport): string {
  return [
    `### bench ingest — ${r.backend}`,
    ``,
    `Machine: ${machineLine(r.machine)}; load at the end ${r.loadAverageEnd.join(" / ")}.`,
    `Corpus: ${r.corpus.documents} Markdown documents (${r.settings.abstractsPerDocument} SciFact abstracts each, ${(r.corpus.bytes / 1024).toFixed(0)} KiB), ${r.corpus.chunks} chunks, ${r.corpus.failed} failed.`,
    ``,
    `| path | seconds | documents/s | chunks/s | ratio (pipeline ÷ this) |`,
    `| --- | ---: | ---: | ---: | ---: |`,
    `| pipeline (upload → READY) | ${r.pipeline.seconds} | ${r.pipeline.documentsPerSecond} | ${r.pipeline.chunksPerSecond} | — |`,
    `| raw embedder, all chunks in one call | ${r.rawEmbedderAllChunks.seconds} | ${r.rawEmbedderAllChunks.documentsPerSecond} | ${r.rawEmbedderAllChunks.chunksPerSecond} | **${r.pipelineOverRaw}** (goal ≥ 0.9: ${goal(r.pipelineOverRaw >= 0.9)}) |`,
    `| raw embedder, one call per document | ${r.rawEmbedderPerDocument.seconds} | ${r.rawEmbedderPerDocument.documentsPerSecond} | ${r.rawEmbedderPerDocument.chunksPerSecond} | ${r.pipelineOverRawPerDocument} |`,
    ``,
    ...(r.modelLimit
      ? [
          `Against the estimate (${r.modelLimit.estimateChunksPerSecond} chunks/s of ${256} word pieces, issue #27): the raw model on ${r.modelLimit.texts} texts of ${r.modelLimit.tokensPerText} word pieces ${r.modelLimit.chunksPerSecond} chunks/s (**${r.modelLimit.overEstimate}** of it); in word pieces a second (${r.modelLimit.chunkTokens} in the stored chunks), the one-call raw ${r.modelLimit.rawAllTokensPerSecond} (**${r.modelLimit.rawAllOverEstimate}**), the pipeline ${r.modelLimit.pipelineTokensPerSecond} (**${r.modelLimit.pipelineOverEstimate}**).`,
          ``,
        ]
      : []),
    `Peak memory: sampled RSS ${r.memory.pipeline.sampledPeakRssMiB} MiB during the pipeline (budget ${r.memory.budgetMiB} MiB, which this process — holding the bench's own copy of the model too — ${r.memory.pipeline.sampledPeakRssMiB <= r.memory.budgetMiB ? "kept" : "**exceeded**"}); VmHWM ${r.memory.afterRaw.vmHwmMiB ?? "n/a"} MiB for the whole bench process, the raw baseline's batches included.`,
    ``,
  ].join("\n");
}

export function formatQueryReport(r: QueryBenchReport): string {
  const out = [
    `### bench query — ${r.backend}`,
    ``,
    `Machine: ${machineLine(r.machine)}; load at the end ${r.loadAverageEnd.join(" / ")}.`,
    `Raw baseline: ${r.rawBaseline}.`,
    `Corpus: ${r.corpus}. ${r.settings.requests} requests per column and cell, ${r.settings.queries} distinct queries, top ${r.settings.topK}.`,
    ``,
  ];
  for (const size of r.sizes) {
    out.push(
      `**${size.chunks.toLocaleString("en-US")} chunks** (loaded in ${size.loadSeconds} s; query embedding alone p50 ${ms(size.embedQuery.p50)} ms; RPC and engine agree on ${Math.round(size.rpcEngineAgreement * 100)}% of checked top-k lists)`,
      ``,
      `| mode | read threads | conc. | RPC p50/p95/p99 ms | engine p50/p95/p99 ms | raw p50/p95/p99 ms | raw on threads p50/p95/p99 ms | RPC ÷ raw (p50) | RPC ÷ raw on threads (p50) | RPC ÷ (raw + embed) | engine ÷ raw | RPC / raw / raw-on-threads req/s |`,
      `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const c of size.cells) {
      const threaded = c.rpcOverRawOnThreadsP50;
      out.push(
        `| ${c.mode} | ${c.readThreads} | ${c.concurrency} | ${pct(c.rpc)} | ${pct(c.engine)} | ${pct(c.raw)} | ${c.rawOnThreads ? pct(c.rawOnThreads) : "—"} | **${c.rpcOverRawP50}** ${c.rpcOverRawP50 <= 1.2 ? "" : "✗"} | ${threaded === undefined ? "—" : `**${threaded}** ${threaded <= 1.2 ? "" : "✗"}`} | ${c.mode === "bm25" ? "—" : c.rpcOverRawPlusEmbedP50} | ${c.engineOverRawP50} | ${c.throughput.rpc} / ${c.throughput.raw} / ${c.throughput.rawOnThreads ?? "—"} |`,
      );
    }
    if (size.hybridOverBm25.length > 0) {
      out.push(``, `| read threads | conc. | hybrid ÷ BM25, RPC p50 (goal ≤ 1.1) | hybrid ÷ BM25, raw p50 |`, `| ---: | ---: | ---: | ---: |`);
      for (const h of size.hybridOverBm25) out.push(`| ${h.readThreads} | ${h.concurrency} | **${h.rpcP50}** ${h.rpcP50 <= 1.1 ? "" : "✗"} | ${h.rawP50} |`);
    }
    if (size.scaling.length > 0) {
      out.push(``, `| mode | read threads | throughput at c = N ÷ at c = 1 | RPC (goal ≥ 1.7) | raw | raw on threads |`, `| --- | ---: | ---: | ---: | ---: | ---: |`);
      for (const t of size.scaling) out.push(`| ${t.mode} | ${t.readThreads} | N = ${t.concurrency} | **${t.rpc}** ${t.rpc >= 1.7 ? "" : "✗"} | ${t.raw} | ${t.rawOnThreads ?? "—"} |`);
    }
    out.push(``);
  }
  return out.join("\n");
}

export function formatChatReport(r: ChatBenchReport): string {
  const out = [
    `### bench chat — ${r.backend}`,
    ``,
    `Machine: ${machineLine(r.machine)}; load at the end ${r.loadAverageEnd.join(" / ")}.`,
    `${r.settings.chunks.toLocaleString("en-US")} synthetic chunks, ${r.settings.requests} questions at concurrency 1, ${r.settings.mode} top ${r.settings.topK}; the stub model streams "${r.stubReply}" 3 characters per delta.`,
    ``,
    `| answerer | retrieval (Search RPC) p50/p95 ms | first citation p50/p95 ms | first token p50/p95 ms | complete p50 ms | first citation − retrieval (p50, goal ≤ 20 ms) | first token − retrieval (p50) |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: |`,
  ];
  for (const row of r.rows) {
    out.push(
      `| ${row.answerer} | ${ms(row.retrieval.p50)} / ${ms(row.retrieval.p95)} | ${ms(row.firstCitation.p50)} / ${ms(row.firstCitation.p95)} | ${ms(row.firstToken.p50)} / ${ms(row.firstToken.p95)} | ${ms(row.complete.p50)} | **${row.firstCitationOverRetrievalMs}** ${row.firstCitationOverRetrievalMs <= 20 ? "" : "✗"} | ${row.firstTokenOverRetrievalMs} |`,
    );
  }
  out.push(``);
  return out.join("\n");
}

/** The scale curve: p50 latency at concurrency 1 against corpus size, one line per backend, mode and column. */
export function scaleChartSvg(reports: QueryBenchReport[]): string {
  const series = reports.flatMap((r) => {
    const modes = [...new Set(r.sizes.flatMap((s) => s.cells.map((c) => c.mode)))];
    return modes.flatMap((mode) =>
      (["rpc", "raw"] as const).map((column) => ({
        name: `${r.backend} ${mode} ${column === "rpc" ? "Search RPC" : "raw"}`,
        points: r.sizes.flatMap((s) => {
          const cell = s.cells.find((c) => c.mode === mode && c.concurrency === Math.min(...s.cells.map((x) => x.concurrency)));
          return cell ? [{ x: s.chunks, y: cell[column].p50 }] : [];
        }),
      })),
    );
  });
  return lineChartSvg({ title: "Search latency p50 at concurrency 1 vs corpus size", xLabel: "chunks (log scale)", yLabel: "p50 latency, ms", logX: true, series });
}
