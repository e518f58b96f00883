// bench fuzz: the fuzz suite's generator (fuzz-inputs.ts) and judge (fuzz-run.ts) for as many
// inputs as asked, against an embedded Quarry started for the run. Reports inputs per second,
// outcomes per recipe, every problem with its index (rebuild it from the seed), unhandled
// rejections seen in this process, and whether the server still answered at the end.
import { DEFAULT_REDRIVE } from "../lib/pipeline/redrive.ts";
import { startBenchBackend, type BackendName } from "./bench-backend.ts";
import { fuzzInputs, fuzzSeeds } from "./fuzz-inputs.ts";
import { runFuzz, summarize, type FuzzOutcome } from "./fuzz-run.ts";
import { describeMachine, type MachineInfo } from "./machine.ts";
import { startMemorySampler, type MemoryPeak } from "./memory.ts";

export interface FuzzBenchOptions {
  backend: BackendName;
  opensearchUrl?: string;
  count: number;
  seed: number;
  progress?(line: string): void;
}

export interface FuzzBenchReport {
  bench: "fuzz";
  backend: BackendName;
  machine: MachineInfo;
  settings: { count: number; seed: number };
  seconds: number;
  outcomes: { previewOk: number; ready: number; failed: number; refused: number; problems: number };
  byKind: Record<string, ReturnType<typeof summarize> extends Map<string, infer V> ? V : never>;
  problems: Pick<FuzzOutcome, "index" | "kind" | "fileName" | "problems">[];
  unhandledRejections: number;
  serverAnsweredAfter: boolean;
  memory: MemoryPeak;
}

export async function runFuzzBench(options: FuzzBenchOptions): Promise<FuzzBenchReport> {
  const log = options.progress ?? (() => {});
  let unhandledRejections = 0;
  const onStray = () => unhandledRejections++;
  process.on("unhandledRejection", onStray);
  // No redrives: an input failure taken for a backend's shows at once as "gave up" and is flagged.
  const backend = await startBenchBackend({ backend: options.backend, opensearchUrl: options.opensearchUrl, env: { QUARRY_MAX_REDRIVES: "0" } });
  const memory = startMemorySampler();
  try {
    await backend.client.createKnowledgeBase({ name: "bench-fuzz" });
    const started = performance.now();
    const outcomes = await runFuzz({
      client: backend.client,
      knowledgeBase: "bench-fuzz",
      inputs: fuzzInputs(options.seed, options.count, await fuzzSeeds()),
      progress: (done) => log(`fuzz: ${done}/${options.count} inputs judged`),
    });
    const seconds = (performance.now() - started) / 1000;
    const serverAnsweredAfter = await backend.client.listKnowledgeBases({}).then(() => true, () => false);
    const count = (predicate: (o: FuzzOutcome) => boolean) => outcomes.filter(predicate).length;
    return {
      bench: "fuzz",
      backend: options.backend,
      machine: describeMachine(),
      settings: { count: options.count, seed: options.seed },
      seconds: Math.round(seconds * 10) / 10,
      outcomes: {
        previewOk: count((o) => o.preview === "ok"),
        ready: count((o) => o.ingest === "READY"),
        failed: count((o) => o.ingest === "FAILED"),
        refused: count((o) => o.ingest === "REFUSED"),
        problems: count((o) => o.problems.length > 0),
      },
      byKind: Object.fromEntries(summarize(outcomes)),
      problems: outcomes.filter((o) => o.problems.length > 0).map(({ index, kind, fileName, problems }) => ({ index, kind, fileName, problems })),
      unhandledRejections,
      serverAnsweredAfter,
      memory: await memory.stop(),
    };
  } finally {
    process.off("unhandledRejection", onStray);
    await backend.close();
  }
}

export function formatFuzzReport(r: FuzzBenchReport): string {
  const rows = Object.entries(r.byKind).map(
    ([kind, k]) => `| ${kind} | ${k.inputs} | ${k.previewOk} | ${k.ready} | ${k.failed} | ${k.refused} | ${k.problems} |`,
  );
  return [
    `### bench fuzz — ${r.backend}`,
    ``,
    `${r.settings.count} inputs from seed ${r.settings.seed} in ${r.seconds} s (${(r.settings.count / r.seconds).toFixed(1)} inputs/s), ` +
      `redrives off (default ${DEFAULT_REDRIVE.maxRedrives}) so a misclassified failure shows at once.`,
    ``,
    `| recipe | inputs | preview ok | READY | FAILED | refused at upload | problems |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...rows,
    `| **all** | ${r.settings.count} | ${r.outcomes.previewOk} | ${r.outcomes.ready} | ${r.outcomes.failed} | ${r.outcomes.refused} | **${r.outcomes.problems}** |`,
    ``,
    `Unhandled rejections in the process: **${r.unhandledRejections}**; server answered after the run: **${r.serverAnsweredAfter ? "yes" : "NO"}**; ` +
      `peak RSS ${r.memory.sampledPeakRssMiB} MiB.`,
    ...(r.problems.length > 0 ? [``, `Problems:`, ...r.problems.slice(0, 50).map((p) => `- #${p.index} ${p.fileName}: ${p.problems.join("; ")}`)] : []),
    ``,
  ].join("\n");
}
