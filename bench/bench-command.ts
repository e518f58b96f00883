// `quarry bench ingest|small-ingest|query|chat|scale|ann|fairness|stall|resume|fuzz|soak|cluster`: performance figures as ratios measured side by side in one
// run, with the machine and its load in every report. Tables go to stdout (JSON with --json); with
// --out each report is also written as <bench>-<backend>.json and .md, and plots as SVG.
// The benches are imported when a bench runs, so the rest of the CLI never loads ONNX Runtime for them.
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Command, Option } from "commander";
import type { RetrievalMode } from "../lib/domain.ts";
import type { OnnxEmbedder } from "../services/embedder/index.ts";
import type { VectorDistribution } from "./bench-ann.ts";
import type { BackendName } from "./bench-backend.ts";
import type { QueryBenchReport } from "./bench-query.ts";

interface CommonOptions {
  backend: BackendName;
  json?: boolean;
  out?: string;
  evalDir: string;
  seed: string;
}

const list = (value: string) => value.split(",").map((v) => v.trim()).filter(Boolean);
const numbers = (value: string) => list(value).map((v) => parsePositive(v));

function parsePositive(value: string): number {
  const n = Number(value.replace(/_/g, "").replace(/k$/i, "000"));
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive whole number, got "${value}"`);
  return n;
}

function parseRatio(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`expected a ratio from 0 to 1, got "${value}"`);
  return n;
}

function common(command: Command): Command {
  return command
    .addOption(new Option("--backend <backend>", "the index behind Quarry").choices(["embedded", "opensearch"]).default("embedded"))
    .option("--json", "print the report as JSON instead of tables")
    .option("--out <dir>", "also write the report (JSON and Markdown) and plots here")
    .option("--eval-dir <dir>", "the BEIR folders the corpora come from", "../shared/eval")
    .option("--seed <n>", "seed for the synthetic corpus and the query sample", "42");
}

function opensearchUrl(backend: BackendName): string | undefined {
  if (backend !== "opensearch") return undefined;
  const url = process.env.OPENSEARCH_URL?.trim();
  if (!url) throw new Error("--backend opensearch needs OPENSEARCH_URL (deploy/local/engines.sh up prints it)");
  return url;
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function withEmbedder<T>(run: (embedder: OnnxEmbedder) => Promise<T>): Promise<T> {
  const { defaultModelDir, OnnxEmbedder } = await import("../services/embedder/index.ts");
  const embedder = await OnnxEmbedder.load(defaultModelDir());
  try {
    return await run(embedder);
  } finally {
    await embedder.close();
  }
}

async function emit(report: { bench: string; backend: string }, markdown: string, options: Pick<CommonOptions, "json" | "out">): Promise<void> {
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : `${markdown}\n`);
  if (!options.out) return;
  const dir = resolve(options.out);
  await mkdir(dir, { recursive: true });
  const base = join(dir, `${report.bench}-${report.backend}`);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(`${base}.md`, markdown);
  progress(`wrote ${base}.json and ${base}.md`);
}

export function registerBenchCommand(program: Command): void {
  const bench = program.command("bench").description("performance benchmarks, as ratios measured side by side (see docs/BENCHMARKS.md)");

  common(bench.command("ingest"))
    .description("pipeline ingest throughput vs the raw embedder on the same chunks, and peak memory")
    .option("--documents <n>", "documents to ingest", "200")
    .option("--abstracts-per-document <n>", "SciFact abstracts per document", "5")
    .action(async (o: CommonOptions & { documents: string; abstractsPerDocument: string }) => {
      const [{ runIngestBench }, { formatIngestReport }] = await Promise.all([import("./bench-ingest.ts"), import("./report.ts")]);
      const report = await withEmbedder((embedder) =>
        runIngestBench({
          backend: o.backend,
          opensearchUrl: opensearchUrl(o.backend),
          documents: parsePositive(o.documents),
          abstractsPerDocument: parsePositive(o.abstractsPerDocument),
          evalDir: resolve(o.evalDir),
          embedder,
          progress,
        }),
      );
      await emit(report, formatIngestReport(report), o);
    });

  bench
    .command("observability")
    .description("tracing and metrics on vs off: ingest throughput and search p50 of two embedded Quarrys, interleaved in rounds")
    .option("--rounds <n>", "rounds; the arms' order alternates", "6")
    .option("--documents <n>", "documents each arm ingests per round", "8")
    .option("--queries <n>", "hybrid searches each arm answers per round", "40")
    .option("--control", "an A/A run: both arms off, the noise floor the on/off ratios must be read against")
    .option("--processes <n>", "processes per arm, their searches pooled and their spread reported (each run's own noise floor)", "1")
    .addOption(new Option("--only <half>", "the on arm turns on only tracing or only metrics, to see which costs what").choices(["tracing", "metrics"]))
    .option("--cpu-prof <dir>", "write each arm's CPU profile (.cpuprofile, for Chrome DevTools) under DIR/on and DIR/off; a profiled run's ratios are not the overhead (the profiler's threads compete for the cores)")
    .option("--sample-ratio <r>", "the on arm traces this share of requests (OTEL_TRACES_SAMPLER=parentbased_traceidratio), not every one")
    .option("--corpus-chunks <n>", "search bench query's synthetic corpus of N chunks (a copy per process) with its queries, instead of the ingested notes")
    .option("--eval-dir <dir>", "the BEIR folders the corpus and queries come from", "../shared/eval")
    .option("--paired", "after each round's ingests, send each query to every process in turn, so on and off searches run moments apart")
    .option("--seed <n>", "seed for the synthetic corpus and the query sample", "42")
    .option("--json", "print the report as JSON instead of tables")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { rounds: string; documents: string; queries: string; processes: string; control?: boolean; only?: "tracing" | "metrics"; cpuProf?: string; sampleRatio?: string; corpusChunks?: string; evalDir: string; paired?: boolean; seed: string; json?: boolean; out?: string }) => {
      const { runObservabilityBench, formatObservabilityReport } = await import("./bench-observability.ts");
      const report = await runObservabilityBench({
        rounds: parsePositive(o.rounds),
        documentsPerRound: parsePositive(o.documents),
        queriesPerRound: parsePositive(o.queries),
        processesPerArm: parsePositive(o.processes),
        control: o.control,
        only: o.only,
        cpuProfileDir: o.cpuProf,
        sampleRatio: o.sampleRatio === undefined ? undefined : parseRatio(o.sampleRatio),
        corpusChunks: o.corpusChunks === undefined ? undefined : parsePositive(o.corpusChunks),
        evalDir: resolve(o.evalDir),
        pairedSearches: o.paired,
        seed: parsePositive(o.seed),
        progress,
      });
      await emit(report, formatObservabilityReport(report), o);
    });

  bench
    .command("small-ingest")
    .description("many one-abstract documents through the pipeline on OpenSearch: documents/s and the engine requests each cost, against another checkout side by side")
    .option("--documents <n>", "documents (SciFact abstracts, one each)", "300")
    .option("--rounds <n>", "rounds; with a baseline they alternate which code goes first", "2")
    .option("--baseline-root <dir>", "a checkout of the code to compare with (node_modules installed or linked)")
    .option("--sqlite-reference", "also ingest with this checkout on embedded SQLite each round")
    .addOption(new Option("--embedder <kind>", "local: the local model; stub: hashing vectors from an OpenAI-compatible stub, to take the model's CPU out").choices(["local", "stub"]).default("local"))
    .option("--eval-dir <dir>", "the BEIR folders the corpus comes from", "../shared/eval")
    .option("--json", "print the report as JSON instead of tables")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { documents: string; rounds: string; baselineRoot?: string; sqliteReference?: boolean; embedder: "local" | "stub"; evalDir: string; json?: boolean; out?: string }) => {
      const { runSmallIngestBench, formatSmallIngestReport } = await import("./bench-small-ingest.ts");
      const report = await runSmallIngestBench({
        opensearchUrl: opensearchUrl("opensearch")!,
        documents: parsePositive(o.documents),
        rounds: parsePositive(o.rounds),
        evalDir: resolve(o.evalDir),
        baselineRoot: o.baselineRoot ? resolve(o.baselineRoot) : undefined,
        sqliteReference: o.sqliteReference,
        embedder: o.embedder,
        progress,
      });
      await emit(report, formatSmallIngestReport(report), { json: o.json, out: o.out });
    });

  bench
    .command("stall")
    .description("ListKnowledgeBases p50/p99 on an idle server vs beside a large one-line upload, its preview and the widest Search; the ratio")
    .option("--large-mb <n>", "size of the large one-line text, MiB", "10")
    .option("--bases <n>", "distinct knowledge bases the reader's Search names (the fan-out limit, where one applies)", "20")
    .option("--idle-calls <n>", "ListKnowledgeBases calls timed on the idle server", "300")
    .option("--timeout <s>", "longest busy phase, seconds", "600")
    .option("--quarry-bin <path>", "the quarry.mjs that serves (another checkout's, for a before/after comparison)")
    .addOption(new Option("--only <half>", "the on arm turns on only tracing or only metrics, to see which costs what").choices(["tracing", "metrics"]))
    .option("--cpu-prof <dir>", "have the server write V8 CPU profiles (one per thread) here when it stops")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { largeMb: string; bases: string; idleCalls: string; timeout: string; quarryBin?: string; cpuProf?: string; json?: boolean; out?: string }) => {
      const { runStallBench, formatStallReport } = await import("./bench-stall.ts");
      const report = await runStallBench({
        quarryBin: o.quarryBin ? resolve(o.quarryBin) : undefined,
        largeBytes: Math.round(Number(o.largeMb) * 2 ** 20),
        bases: parsePositive(o.bases),
        idleCalls: parsePositive(o.idleCalls),
        timeoutMs: parsePositive(o.timeout) * 1000,
        cpuProfileDir: o.cpuProf ? resolve(o.cpuProf) : undefined,
        progress,
      });
      await emit(report, formatStallReport(report), o);
    });

  bench
    .command("resume")
    .description("a large document's embedding stopped by SIGTERMs and kill -9, restarted each time: how often each chunk was embedded")
    .option("--large-mb <n>", "size of the one-line text, MiB", "10")
    .option("--interrupt <signals>", "the interruptions in order, while it embeds", "SIGTERM,SIGTERM,SIGTERM,SIGKILL")
    .option("--delay-ms <n>", "the stub embedding endpoint's pause per request of up to 128 texts, ms (paces embedding)", "1000")
    .option("--timeout <s>", "longest the whole run may take, seconds", "1800")
    .option("--quarry-bin <path>", "the quarry.mjs that serves (another checkout's, for a before/after comparison)")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { largeMb: string; interrupt: string; delayMs: string; timeout: string; quarryBin?: string; json?: boolean; out?: string }) => {
      const { runResumeBench, formatResumeReport } = await import("./bench-resume.ts");
      const interruptions = list(o.interrupt).map((signal) => {
        if (signal !== "SIGTERM" && signal !== "SIGKILL") throw new Error(`--interrupt takes SIGTERM and SIGKILL, got "${signal}"`);
        return signal;
      });
      const report = await runResumeBench({
        quarryBin: o.quarryBin ? resolve(o.quarryBin) : undefined,
        largeBytes: Math.round(Number(o.largeMb) * 2 ** 20),
        interruptions,
        embeddingDelayMs: Number(o.delayMs),
        timeoutMs: parsePositive(o.timeout) * 1000,
        progress,
      });
      await emit(report, formatResumeReport(report), o);
    });

  bench
    .command("sync")
    .description("source syncs per kind (folder, website, S3 when S3_ENDPOINT is set): first, unchanged re-sync and its ratio, after changing 10 (time, embedder calls)")
    .option("--files <n>", "items per kind", "300")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { files: string; json?: boolean; out?: string }) => {
      const { runSyncBench, formatSyncReport } = await import("./bench-sync.ts");
      const report = await runSyncBench({ files: parsePositive(o.files), progress });
      await emit(report, formatSyncReport(report), o);
    });

  bench
    .command("fairness")
    .description("time to ready of a small document while a large one vectorizes, vs alone; SIGTERM time and peak RSS of the server")
    .option("--large-mb <n>", "size of the large one-line text, MiB", "10")
    .option("--small <n>", "small documents uploaded behind it, one after another", "3")
    .option("--timeout <s>", "longest wait for a small document behind the large one, seconds", "300")
    .option("--quarry-bin <path>", "the quarry.mjs that serves (another checkout's, for a before/after comparison)")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { largeMb: string; small: string; timeout: string; quarryBin?: string; json?: boolean; out?: string }) => {
      const { runFairnessBench, formatFairnessReport } = await import("./bench-fairness.ts");
      const report = await runFairnessBench({
        quarryBin: o.quarryBin ? resolve(o.quarryBin) : undefined,
        largeBytes: Math.round(Number(o.largeMb) * 2 ** 20),
        smallDocuments: parsePositive(o.small),
        timeoutMs: parsePositive(o.timeout) * 1000,
        progress,
      });
      await emit(report, formatFairnessReport(report), { json: o.json, out: o.out });
    });

  common(bench.command("query"))
    .description("Search RPC latency percentiles vs the engine's raw query, per mode and concurrency")
    .option("--sizes <list>", "corpus sizes in chunks", "10000,100000")
    .option("--concurrency <list>", "concurrent clients", "1,8,32")
    .option("--read-threads <list>", "embedded: the index's read threads, one Quarry each (0: reads on the main thread, as before)", "0,2")
    .option("--requests <n>", "requests per column and cell", "200")
    .option("--queries <n>", "distinct queries", "100")
    .option("--modes <list>", "retrieval modes", "bm25,hybrid")
    .option("--top-k <n>", "hits per search", "10")
    .action(async (o: CommonOptions & { sizes: string; concurrency: string; readThreads: string; requests: string; queries: string; modes: string; topK: string }) => {
      const [{ runQueryBench }, { formatQueryReport }] = await Promise.all([import("./bench-query.ts"), import("./report.ts")]);
      const report = await withEmbedder((embedder) =>
        runQueryBench({
          backend: o.backend,
          opensearchUrl: opensearchUrl(o.backend),
          sizes: numbers(o.sizes),
          concurrency: numbers(o.concurrency),
          readThreads: list(o.readThreads).map((v) => (v === "0" ? 0 : parsePositive(v))),
          requests: parsePositive(o.requests),
          queries: parsePositive(o.queries),
          modes: parseModes(o.modes),
          topK: parsePositive(o.topK),
          seed: parsePositive(o.seed),
          evalDir: resolve(o.evalDir),
          embedder,
          progress,
        }),
      );
      await emit(report, formatQueryReport(report), o);
    });

  common(bench.command("chat"))
    .description("time to first citation and first token (extractive and a local OpenAI-compatible stub) vs retrieval alone")
    .option("--chunks <n>", "synthetic chunks in the knowledge base", "10000")
    .option("--requests <n>", "questions", "50")
    .action(async (o: CommonOptions & { chunks: string; requests: string }) => {
      const [{ runChatBench }, { formatChatReport }] = await Promise.all([import("./bench-chat.ts"), import("./report.ts")]);
      const report = await runChatBench({
        backend: o.backend,
        opensearchUrl: opensearchUrl(o.backend),
        chunks: parsePositive(o.chunks),
        requests: parsePositive(o.requests),
        seed: parsePositive(o.seed),
        evalDir: resolve(o.evalDir),
        progress,
      });
      await emit(report, formatChatReport(report), o);
    });

  common(bench.command("fuzz"))
    .description("seeded hostile uploads through PreviewChunks and upload: every input READY, FAILED with a readable reason, or refused; no crash")
    .option("--count <n>", "inputs to generate", "1000")
    .action(async (o: CommonOptions & { count: string }) => {
      const { runFuzzBench, formatFuzzReport } = await import("./bench-fuzz.ts");
      const report = await runFuzzBench({
        backend: o.backend,
        opensearchUrl: opensearchUrl(o.backend),
        count: parsePositive(o.count),
        seed: parsePositive(o.seed),
        progress,
      });
      await emit(report, formatFuzzReport(report), o);
      if (report.outcomes.problems > 0 || report.unhandledRejections > 0 || !report.serverAnsweredAfter) process.exitCode = 1;
    });

  bench
    .command("soak")
    .description("documents ingested while faults are injected (kill -9; distributed: a service, Kafka, OpenSearch), then concurrent chat streams; reports lost, duplicated, failed, stream errors")
    .addOption(new Option("--backend <backend>", "embedded (quarry serve) or distributed (quarry serve all on a private Kafka and OpenSearch)").choices(["embedded", "distributed"]).default("embedded"))
    .option("--documents <n>", "generated documents to ingest", "1000")
    .option("--kills <n>", "embedded: how many times the server is killed -9 during ingestion", "3")
    .option("--upload-concurrency <n>", "uploads in flight at once", "8")
    .option("--chat-streams <n>", "concurrent chat streams after ingestion", "50")
    .option("--duration <s>", "how long the chat phase runs, seconds", "300")
    .option("--settle-timeout <s>", "longest wait for every document to reach READY or FAILED, seconds", "3600")
    .option("--retry-for <s>", "how long a failing upload is sent again (its server may be away), seconds", "600")
    .option("--seed <n>", "seed for the generated documents and questions", "42")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(
      async (o: {
        backend: "embedded" | "distributed";
        documents: string;
        kills: string;
        uploadConcurrency: string;
        chatStreams: string;
        duration: string;
        settleTimeout: string;
        retryFor: string;
        seed: string;
        json?: boolean;
        out?: string;
      }) => {
        const { runSoak, formatSoakReport, soakPassed } = await import("./bench-soak.ts");
        const target =
          o.backend === "embedded"
            ? await (await import("./soak-embedded.ts")).startEmbeddedSoakTarget({ kills: parsePositive(o.kills), progress })
            : await (await import("./soak-distributed.ts")).startDistributedSoakTarget({ progress });
        try {
          const { report } = await runSoak(target, {
            documents: parsePositive(o.documents),
            uploadConcurrency: parsePositive(o.uploadConcurrency),
            chatStreams: parsePositive(o.chatStreams),
            chatDurationMs: parsePositive(o.duration) * 1000,
            settleTimeoutMs: parsePositive(o.settleTimeout) * 1000,
            retryForMs: parsePositive(o.retryFor) * 1000,
            seed: parsePositive(o.seed),
            progress,
          });
          await emit(report, formatSoakReport(report), { json: o.json, out: o.out });
          if (!soakPassed(report)) process.exitCode = 1;
        } finally {
          await target.stop();
        }
      },
    );

  bench
    .command("cluster")
    .description("3 brokers, 3 OpenSearch nodes, 2 replicas of every stage and 2 gateways: ingests while it kills (and, as root, cuts off the network) one node at a time; reports READY / lost / duplicated, searches failed per fault, take-over times, each replica's share")
    .option("--documents <n>", "documents ingested through the faults", "1000")
    .option("--no-cuts", "kill nodes only; no network cuts (they need root and network namespaces)")
    .option("--json", "print the report as JSON instead of tables")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { documents: string; cuts: boolean; json?: boolean; out?: string }) => {
      const { runClusterBench, formatClusterReport } = await import("./bench-cluster.ts");
      const report = await runClusterBench({ documents: parsePositive(o.documents), cuts: o.cuts, progress });
      await emit(report, formatClusterReport(report), o);
      if (!report.passed) process.exitCode = 1;
    });

  bench
    .command("ann")
    .description("approximate kNN candidates vs sqlite-vec's exact scan: recall@k, query p50/p95, build time, memory, file size")
    .option("--size <n>", "vectors in the index", "100000")
    .option("--dimension <n>", "vector dimension", "384")
    .option("--queries <n>", "queries timed", "200")
    .option("--k <n>", "neighbours asked for", "10")
    .option("--seed <n>", "seed for the synthetic vectors", "42")
    .option("--only <list>", "candidates to run beside the exact scan, by name prefix (usearch,hnswlib,lancedb)")
    .addOption(new Option("--vectors <kind>", "clustered: size/100 tight centres; scale-corpus: as bench scale draws them").choices(["clustered", "scale-corpus"]).default("clustered"))
    .option("--expansions <list>", "also search the usearch build at these search expansions, e.g. 128,512,2048")
    .option("--topics <n>", "scale-corpus: topics the vectors are drawn around", "64")
    .option("--json", "print the report as JSON instead of a table")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .action(async (o: { size: string; dimension: string; queries: string; k: string; seed: string; only?: string; vectors: VectorDistribution; expansions?: string; topics: string; json?: boolean; out?: string }) => {
      const { runAnnBench, formatAnnReport } = await import("./bench-ann.ts");
      const report = await runAnnBench({
        size: parsePositive(o.size),
        dimension: parsePositive(o.dimension),
        queries: parsePositive(o.queries),
        k: parsePositive(o.k),
        seed: parsePositive(o.seed),
        only: o.only ? list(o.only) : undefined,
        vectors: o.vectors,
        expansions: o.expansions ? numbers(o.expansions) : undefined,
        topics: parsePositive(o.topics),
        progress,
      });
      await emit(report, formatAnnReport(report), o);
    });

  bench
    .command("plot")
    .description("draw the scale curve from saved bench query reports (JSON written with --out)")
    .argument("<reports...>", "query-<backend>.json files")
    .option("--plot <file>", "where the SVG goes", "bench-out/scale.svg")
    .action(async (files: string[], o: { plot: string }) => {
      const { readFile } = await import("node:fs/promises");
      const { scaleChartSvg } = await import("./report.ts");
      const reports = await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, "utf8")) as QueryBenchReport));
      const wrong = reports.find((r) => !Array.isArray(r.sizes));
      if (wrong) throw new Error("these are not bench query reports (no sizes)");
      await writePlot(o.plot, scaleChartSvg(reports));
    });

  bench
    .command("scale")
    .description("the scale curve with the stub embedder: Search RPC p50/p95 per mode and concurrency, embedded exact vs approximate (HNSW) and OpenSearch (with OPENSEARCH_URL), recall@10, load rate, RSS, disk; plotted as SVG")
    .option("--sizes <list>", "corpus sizes in chunks", "10000,100000")
    .option("--arms <list>", "what to measure: embedded-exact, embedded-hnsw, opensearch (default: all three, opensearch when OPENSEARCH_URL is set)")
    .option("--concurrency <list>", "concurrent clients", "1,8,32")
    .option("--modes <list>", "retrieval modes", "bm25,vector,hybrid")
    .option("--requests <n>", "RPCs per arm, mode and concurrency", "60")
    .option("--queries <n>", "distinct query texts", "100")
    .option("--recall-queries <n>", "query vectors for recall@10 against the exact scan", "200")
    .option("--exact-below <n>", "the embedded-hnsw arm's QUARRY_VECTOR_INDEX_EXACT_BELOW (default: the store's, 20000)")
    .option("--plot <file>", "where the SVG goes", "bench-out/scale.svg")
    .option("--json", "print the report as JSON instead of tables")
    .option("--out <dir>", "also write the report (JSON and Markdown) here")
    .option("--eval-dir <dir>", "the BEIR folders the corpora come from", "../shared/eval")
    .option("--seed <n>", "seed for the synthetic corpus and the query sample", "42")
    .action(
      async (o: { sizes: string; arms?: string; exactBelow?: string; concurrency: string; modes: string; requests: string; queries: string; recallQueries: string; plot: string; json?: boolean; out?: string; evalDir: string; seed: string }) => {
        const { runScaleBench, formatScaleReport, scaleCurveSvg } = await import("./bench-scale.ts");
        const known = ["embedded-exact", "embedded-hnsw", "opensearch"] as const;
        const arms = o.arms ? list(o.arms) : process.env.OPENSEARCH_URL?.trim() ? [...known] : ["embedded-exact", "embedded-hnsw"];
        for (const arm of arms) if (!(known as readonly string[]).includes(arm)) throw new Error(`unknown arm "${arm}"; use ${known.join(", ")}`);
        if (!arms.includes("opensearch")) progress("no opensearch arm (set OPENSEARCH_URL to add it)");
        const report = await runScaleBench({
          sizes: numbers(o.sizes),
          arms: arms as (typeof known)[number][],
          opensearchUrl: arms.includes("opensearch") ? opensearchUrl("opensearch") : undefined,
          concurrency: numbers(o.concurrency),
          modes: parseModes(o.modes),
          requests: parsePositive(o.requests),
          queries: parsePositive(o.queries),
          recallQueries: parsePositive(o.recallQueries),
          exactBelow: o.exactBelow === undefined ? undefined : Number(o.exactBelow),
          seed: parsePositive(o.seed),
          evalDir: resolve(o.evalDir),
          progress,
        });
        await emit(report, formatScaleReport(report), o);
        await writePlot(o.plot, scaleCurveSvg(report));
      },
    );
}

async function writePlot(file: string, svg: string): Promise<void> {
  const plot = resolve(file);
  await mkdir(resolve(plot, ".."), { recursive: true });
  await writeFile(plot, svg);
  progress(`wrote ${plot}`);
}

function parseModes(value: string): RetrievalMode[] {
  const modes = list(value);
  for (const mode of modes) if (!["bm25", "vector", "hybrid"].includes(mode)) throw new Error(`unknown mode "${mode}"; use bm25, vector or hybrid`);
  return modes as RetrievalMode[];
}
