// quarry: serve Quarry (embedded, or one service of the distributed mode) and talk to it.
import { Command, Option } from "commander";
import { ConnectError } from "@connectrpc/connect";
import { ConfigError } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { installProcessGuards } from "../lib/process-guards.ts";
import { stopOnSignals } from "../lib/service-runtime.ts";
import { ask, ingest, search } from "./commands.ts";
import { gatewayClient } from "./gateway-client.ts";
import { registerEvalCommand } from "../eval/eval-command.ts";
import { registerBenchCommand } from "../bench/bench-command.ts";

// `quarry ask … | head` closes the pipe early; that is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const program = new Command("quarry").description("Knowledge-base RAG with citations you can trust");
const urlOption = () => new Option("--url <url>", "the gateway").env("QUARRY_URL").default("http://localhost:8080");
const SERVICES = ["parser", "chunker", "embedder", "index", "answer", "gateway"] as const;

program
  .command("serve")
  .description("start Quarry: everything embedded in one process, or one named service")
  .argument("[service]", `one of ${SERVICES.join(", ")}; omit for embedded mode`)
  .option("--port <port>", "port to listen on (QUARRY_PORT, or QUARRY_<SERVICE>_PORT)")
  .option("--host <host>", "address to bind (QUARRY_HOST)")
  .option("--data-dir <dir>", "where the embedded SQLite file lives (QUARRY_DATA_DIR)")
  .action(async (service: string | undefined, options: { port?: string; host?: string; dataDir?: string }) => {
    const env = { ...process.env };
    if (options.dataDir) env.QUARRY_DATA_DIR = options.dataDir;
    if (options.host) env.QUARRY_HOST = options.host;
    if (options.port) env[!service || service === "gateway" ? "QUARRY_PORT" : `QUARRY_${service.toUpperCase()}_PORT`] = options.port;
    const logger = createLogger(service ?? "quarry");
    installProcessGuards(logger);
    if (service && !(SERVICES as readonly string[]).includes(service)) throw new ConfigError(`unknown service ${service}; choose one of ${SERVICES.join(", ")}`);
    const running = service
      ? await (await import("./serve-service.ts")).startService(service as never, env, logger)
      : await (await import("./embedded.ts")).startEmbedded(env, logger);
    process.stdout.write(`Quarry ${service ?? "embedded"} listening on ${running.url}\n`);
    stopOnSignals(() => running.stop(), logger);
  });

const kb = program.command("kb").description("knowledge bases");
kb.command("create")
  .argument("<name>")
  .option("--description <text>", "", "")
  .option("--chunk-size <tokens>", "tokens per chunk")
  .option("--chunk-overlap <tokens>", "tokens of overlap")
  .addOption(urlOption())
  .action(async (name: string, o: { description: string; chunkSize?: string; chunkOverlap?: string; url: string }) => {
    const res = await gatewayClient(o.url).createKnowledgeBase({
      name,
      description: o.description,
      chunking: o.chunkSize || o.chunkOverlap ? { chunkSize: Number(o.chunkSize ?? 0), chunkOverlap: Number(o.chunkOverlap ?? 0) } : undefined,
    });
    const k = res.knowledgeBase!;
    process.stdout.write(`${k.name} (${k.id}) — ${k.embeddingModel}, ${k.embeddingDimension} dims, chunks of ${k.chunking?.chunkSize} tokens with ${k.chunking?.chunkOverlap} overlap\n`);
  });
kb.command("list")
  .addOption(urlOption())
  .action(async (o: { url: string }) => {
    const res = await gatewayClient(o.url).listKnowledgeBases({});
    for (const k of res.knowledgeBases) {
      process.stdout.write(`${k.name}\t${k.id}\t${k.documentCount} documents\t${k.chunkCount} chunks\t${k.embeddingModel}\n`);
    }
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
    const result = await ingest(gatewayClient(o.url), paths, o.kb, { wait: o.wait, out: process.stdout });
    if (result.failed > 0) process.exitCode = 1;
  });

program
  .command("ask")
  .description("ask a question; the answer streams, then its sources")
  .argument("<question>")
  .requiredOption("--kb <names...>", "knowledge base(s)")
  .option("--mode <mode>", "hybrid, bm25 or vector", "hybrid")
  .option("--top-k <n>", "chunks to retrieve", (v) => Number(v))
  .addOption(urlOption())
  .action(async (question: string, o: { kb: string[]; mode: string; topK?: number; url: string }) => {
    await ask(gatewayClient(o.url), question, o.kb, { mode: o.mode, topK: o.topK, out: process.stdout });
  });

program
  .command("search")
  .description("a retrieval test: hits with scores and why they rank there")
  .argument("<query>")
  .requiredOption("--kb <names...>", "knowledge base(s)")
  .option("--mode <mode>", "hybrid, bm25 or vector", "hybrid")
  .option("--top-k <n>", "hits", (v) => Number(v))
  .addOption(urlOption())
  .action(async (query: string, o: { kb: string[]; mode: string; topK?: number; url: string }) => {
    await search(gatewayClient(o.url), query, o.kb, { mode: o.mode, topK: o.topK, out: process.stdout });
  });

registerEvalCommand(program);
registerBenchCommand(program);

program.parseAsync().catch((error: unknown) => {
  if (error instanceof ConnectError) process.stderr.write(`quarry: ${error.rawMessage} (${codeName(error.code)})\n`);
  else if (error instanceof ConfigError || (error instanceof Error && /model is missing|npm run setup/.test(error.message))) {
    process.stderr.write(`quarry: ${error.message}\n`);
  } else process.stderr.write(`quarry: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

function codeName(code: number): string {
  return ["ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found", "already_exists", "permission_denied",
    "resource_exhausted", "failed_precondition", "aborted", "out_of_range", "unimplemented", "internal", "unavailable", "data_loss",
    "unauthenticated"][code] ?? String(code);
}
