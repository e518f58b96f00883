// quarry: serve Quarry (embedded, or one service of the distributed mode) and talk to it.
import { readFileSync } from "node:fs";
import { Argument, Command, InvalidArgumentError, Option } from "commander";
import { isHttpUrl } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { installProcessGuards } from "../lib/process-guards.ts";
import { shutdownGraceMs, stopOnSignals } from "../lib/service-runtime.ts";
import { ask, ingest, listKnowledgeBases, MODES, search, type ModeName } from "./commands.ts";
import { reportLine, UsageError } from "./error-report.ts";
import { addRetrievalFlags, retrievalSettingsOf, type RetrievalFlags } from "../client/retrieval-flags.ts";
import { gatewayClient } from "../client/gateway-client.ts";
import { chunkingFromFlags, describeChunking, DOCUMENT_VECTOR_CHOICES, PARENT_CHOICES, type ChunkingFlags } from "../client/chunking-options.ts";
import { registerEvalCommand } from "../eval/eval-command.ts";
import { registerEvalAnswersCommand } from "../eval/eval-answers-command.ts";
import { registerBenchCommand } from "../bench/bench-command.ts";
import { registerAssistantCommands } from "./assistant-commands.ts";
import { registerSourceCommands } from "./source-commands.ts";
import { registerCorrectCommand } from "./correct-command.ts";
import { registerDebugCommand } from "./debug-command.ts";
import { registerKeysCommand } from "./keys-command.ts";
import { registerStatusCommand } from "./status-command.ts";
import { registerMcpCommand } from "./mcp-command.ts";
import { registerModelsCommand } from "./models-command.ts";
import { registerPortabilityCommands } from "./portability-commands.ts";
import { registerBackupCommands, registerDoctorCommand } from "./backup-commands.ts";
import { registerEditCommands } from "./edit-commands.ts";
import { registerDocumentCommands } from "./document-commands.ts";
import { setModel } from "./set-model.ts";

// `quarry ask … | head` closes the pipe early; that is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

const program = new Command("quarry").description("Knowledge-base RAG with citations you can trust").version(version);
// One option for every command: clients send the key, `serve` takes it as the bootstrap admin key.
program.addOption(new Option("--api-key <key>", "API key (clients send it; serve accepts it as an admin key)").env("QUARRY_API_KEY"));
program.hook("preAction", () => {
  const apiKey = program.opts<{ apiKey?: string }>().apiKey;
  if (apiKey) process.env.QUARRY_API_KEY = apiKey;
});
const urlOption = () => new Option("--url <url>", "the gateway").env("QUARRY_URL").default("http://localhost:8080").argParser(httpUrl);
const modeOption = () => new Option("--mode <mode>", "retrieval mode").choices(MODES).default("hybrid");
const SERVICES = ["parser", "chunker", "embedder", "index", "answer", "gateway"] as const;

// Flag values are checked by commander as it parses, so a typo fails before any request is made,
// with commander's one-line "error: option ... argument ... is invalid" and exit code 1.
function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `It must be a whole number of at least ${min}.` : `It must be a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}

function httpUrl(value: string): string {
  if (!isHttpUrl(value)) throw new InvalidArgumentError("It must be an http:// or https:// URL, e.g. http://localhost:8080.");
  return value;
}

program
  .command("serve")
  .description("start Quarry: everything embedded in one process, or one named service")
  .addArgument(
    new Argument("[service]", `one of ${SERVICES.join(", ")}; all for the six as child processes (--port is then the first of six); omit for embedded mode`).choices([
      ...SERVICES,
      "all",
    ]),
  )
  .option("--port <port>", "port to listen on (QUARRY_PORT, or QUARRY_<SERVICE>_PORT)", wholeNumber(0, 65535))
  .option("--host <host>", "address to bind (QUARRY_HOST)")
  .option("--data-dir <dir>", "where the embedded SQLite file lives (QUARRY_DATA_DIR)")
  .option("--insecure", "allow a non-loopback --host with no API key (QUARRY_INSECURE=1)")
  .option("--replicas <n>", "with all: run n processes of each service, each service on n consecutive ports (needs KAFKA_BROKERS and OPENSEARCH_URL)", wholeNumber(1, 20))
  .action(async (service: (typeof SERVICES)[number] | "all" | undefined, options: { port?: number; host?: string; dataDir?: string; insecure?: boolean; replicas?: number }) => {
    if (service === "all") {
      const { serveAll } = await import("../app/serve-all.ts");
      return serveAll({ ...options, port: options.port === undefined ? undefined : String(options.port) }, options.insecure ? { ...process.env, QUARRY_INSECURE: "1" } : process.env);
    }
    if (options.replicas !== undefined) {
      throw new UsageError(`--replicas is for quarry serve all; for more of one service, start quarry serve ${service ?? "<service>"} again on another port.`);
    }
    const env = { ...process.env };
    if (options.insecure) env.QUARRY_INSECURE = "1";
    if (options.dataDir) env.QUARRY_DATA_DIR = options.dataDir;
    if (options.host) env.QUARRY_HOST = options.host;
    if (options.port !== undefined) env[!service || service === "gateway" ? "QUARRY_PORT" : `QUARRY_${service.toUpperCase()}_PORT`] = String(options.port);
    const logger = createLogger(service ?? "quarry");
    installProcessGuards(logger);
    const running = service
      ? await (await import("../app/serve-service.ts")).startService(service, env, logger)
      : await (await import("../app/embedded.ts")).startEmbedded(env, logger);
    process.stdout.write(`Quarry ${service ?? "embedded"} listening on ${running.url}\n`);
    if (!service || service === "gateway") process.stdout.write(`Console: ${running.url}/\n`);
    stopOnSignals(() => running.stop(), logger, shutdownGraceMs(env));
  });

const kb = program.command("kb").description("knowledge bases");
kb.command("create")
  .argument("<name>")
  .option("--description <text>", "", "")
  .option("--chunk-size <tokens>", "tokens per chunk", wholeNumber(1))
  .option("--chunk-overlap <tokens>", "tokens of overlap", wholeNumber(0))
  .addOption(new Option("--parent <mode>", "two-level chunking: chunks are matched, their section or whole document is what answers read").choices(PARENT_CHOICES))
  .option("--parent-size <tokens>", "the most tokens of one parent (default 1024)", wholeNumber(1))
  .addOption(
    new Option("--document-vector <mode>", "auto (the default): also embed each document the model reads at least half of as a whole, a chunk ranking by the better cosine of it and its document; off: chunk vectors only").choices(
      DOCUMENT_VECTOR_CHOICES,
    ),
  )
  .option("--embedding-model <name>", "the base's embedding model (see `quarry models list`); default: the embedder's")
  .addOption(urlOption())
  .action(async (name: string, o: ChunkingFlags & { description: string; embeddingModel?: string; url: string }) => {
    const res = await gatewayClient(o.url).createKnowledgeBase({
      name,
      description: o.description,
      embeddingModel: o.embeddingModel ?? "",
      chunking: chunkingFromFlags(o),
    });
    const k = res.knowledgeBase!;
    process.stdout.write(`${k.name} (${k.id}) — ${k.embeddingModel}, ${k.embeddingDimension} dims, ${describeChunking(k.chunking)}\n`);
  });
kb.command("set-model")
  .description("re-embed a base with another model beside the old vectors; searches switch when every document is done")
  .argument("<name>")
  .argument("<model>", "see `quarry models list`")
  .option("--no-wait", "return once the change has started (progress: `quarry kb list`, or the WatchModelChange stream)")
  .addOption(urlOption())
  .action(async (name: string, model: string, o: { wait: boolean; url: string }) => {
    if (!(await setModel(gatewayClient(o.url), name, model, { wait: o.wait, out: process.stdout }))) process.exitCode = 1;
  });
kb.command("list")
  .addOption(urlOption())
  .action(async (o: { url: string }) => {
    await listKnowledgeBases(gatewayClient(o.url), process.stdout);
  });
kb.command("delete")
  .argument("<name>")
  .addOption(urlOption())
  .action(async (name: string, o: { url: string }) => {
    await gatewayClient(o.url).deleteKnowledgeBase({ knowledgeBase: name });
    process.stdout.write(`deleted ${name}\n`);
  });

program
  .command("ingest")
  .description("upload files or folders and watch them ingest (creates the knowledge base if needed)")
  .argument("<paths...>")
  .requiredOption("--kb <name>", "knowledge base")
  .option("--no-wait", "return once uploaded")
  .addOption(urlOption())
  .action(async (paths: string[], o: { kb: string; wait: boolean; url: string }) => {
    // A folder is walked for the formats the server says it reads (ListReadableFormats).
    const result = await ingest(gatewayClient(o.url), paths, o.kb, { wait: o.wait, out: process.stdout });
    if (result.failed > 0) process.exitCode = 1;
  });

addRetrievalFlags(
  program
    .command("ask")
    .description("ask a question; the answer streams, then its sources")
    .argument("<question>")
    .requiredOption("--kb <names...>", "knowledge base(s)")
    .addOption(modeOption())
    .option("--top-k <n>", "chunks to retrieve", wholeNumber(1))
    .option("--conversation", "keep the question and its answer as a conversation (listed, continued with `quarry chat --conversation ID`)")
    .addOption(urlOption()),
).action(async (question: string, o: RetrievalFlags & { kb: string[]; mode: ModeName; topK?: number; conversation?: boolean; url: string }) => {
  await ask(gatewayClient(o.url), question, o.kb, { mode: o.mode, topK: o.topK, retrieval: retrievalSettingsOf(o), keep: o.conversation ?? false, out: process.stdout });
});

addRetrievalFlags(
  program
    .command("search")
    .description("a retrieval test: hits with scores and why they rank there")
    .argument("<query>")
    .requiredOption("--kb <names...>", "knowledge base(s)")
    .addOption(modeOption())
    .option("--top-k <n>", "hits", wholeNumber(1))
    .addOption(urlOption()),
).action(async (query: string, o: RetrievalFlags & { kb: string[]; mode: ModeName; topK?: number; url: string }) => {
  await search(gatewayClient(o.url), query, o.kb, { mode: o.mode, topK: o.topK, retrieval: retrievalSettingsOf(o), out: process.stdout });
});

registerDocumentCommands(program, registerEditCommands(program, kb, urlOption, wholeNumber), urlOption, wholeNumber);
registerKeysCommand(program, urlOption);
registerStatusCommand(program, urlOption);
registerPortabilityCommands(program, urlOption);
registerBackupCommands(program);
registerDoctorCommand(program);
registerMcpCommand(program, urlOption, version);
registerAssistantCommands(program, urlOption);
registerSourceCommands(program, urlOption);
registerCorrectCommand(program, urlOption);
registerDebugCommand(program, urlOption);
registerEvalCommand(program);
registerEvalAnswersCommand(program);
registerBenchCommand(program);
registerModelsCommand(program);

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`quarry: ${reportLine(error)}\n`);
  process.exit(1);
});
