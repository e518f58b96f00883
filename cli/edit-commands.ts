// `quarry kb update` (name, description, chunking of future ingests), `quarry kb reingest` and
// `quarry doc reingest`: run documents through the pipeline again from the originals the gateway
// kept, with the base's current settings, and follow them as `quarry ingest` does.
import { Option, type Command } from "commander";
import { Code, ConnectError } from "@connectrpc/connect";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { chunkingFromFlags, describeChunking, mergeChunkingFlags, PARENT_CHOICES, type ChunkingFlags } from "../client/chunking-options.ts";
import { followIngestion } from "./commands.ts";
import { UsageError } from "./error-report.ts";
import { plural } from "./ingest-progress.ts";

type WholeNumber = (min: number) => (value: string) => number;

/** Returns the `doc` command, which cli/document-commands.ts adds to. */
export function registerEditCommands(program: Command, kb: Command, urlOption: () => Option, wholeNumber: WholeNumber): Command {
  kb.command("update")
    .description("rename a base, edit its description, or set the chunking of future ingests (`quarry kb reingest` applies it to the documents already there)")
    .argument("<name>")
    .option("--name <new-name>", "a new name")
    .option("--description <text>", "a new description")
    .option("--chunk-size <tokens>", "tokens per chunk", wholeNumber(1))
    .option("--chunk-overlap <tokens>", "tokens of overlap", wholeNumber(0))
    .addOption(new Option("--parent <mode>", "two-level chunking: chunks are matched, their section or whole document is what answers read").choices(PARENT_CHOICES))
    .option("--parent-size <tokens>", "the most tokens of one parent", wholeNumber(1))
    .addOption(urlOption())
    .action(async (name: string, o: ChunkingFlags & { name?: string; description?: string; url: string }) => {
      const client = gatewayClient(o.url);
      const wantsChunking = chunkingFromFlags(o) !== undefined;
      if (o.name === undefined && o.description === undefined && !wantsChunking) throw new UsageError("nothing to update: give --name, --description or a chunking flag");
      const current = wantsChunking ? (await client.getKnowledgeBase({ knowledgeBase: name })).knowledgeBase : undefined;
      const { knowledgeBase: k } = await client.updateKnowledgeBase({ knowledgeBase: name, name: o.name, description: o.description, chunking: mergeChunkingFlags(current?.chunking, o) });
      process.stdout.write(`${k!.name} (${k!.id}) — ${describeChunking(k!.chunking)}${k!.description ? `; ${k!.description}` : ""}\n`);
      if (wantsChunking && k!.documentCount > 0n) process.stdout.write(`the ${plural(Number(k!.documentCount), "document")} already there keep their chunks until \`quarry kb reingest ${k!.name}\`\n`);
    });

  kb.command("reingest")
    .description("ingest every document of the base again from its kept original, with the base's current settings")
    .argument("<name>")
    .option("--no-wait", "return once submitted")
    .addOption(urlOption())
    .action(async (name: string, o: { wait: boolean; url: string }) => {
      const client = gatewayClient(o.url);
      const { documents, notKept } = await client.reingestKnowledgeBase({ knowledgeBase: name });
      for (const doc of notKept) process.stdout.write(`not kept   ${doc.fileName}: its original was not kept; upload it again\n`);
      process.stdout.write(`re-ingesting ${plural(documents.length, "document")}\n`);
      if (o.wait && documents.length > 0) await follow(client, documents.map((d) => d.id));
      if (notKept.length > 0) process.exitCode = 1;
    });

  const doc = program.command("doc").description("documents");
  doc
    .command("reingest")
    .description("ingest a document again from its kept original, with its base's current settings")
    .argument("<document>", "the document's id, or its file name with --kb")
    .option("--kb <name>", "the knowledge base, when naming the document by its file name")
    .option("--no-wait", "return once submitted")
    .addOption(urlOption())
    .action(async (document: string, o: { kb?: string; wait: boolean; url: string }) => {
      const client = gatewayClient(o.url);
      const id = o.kb ? await documentIdByName(client, o.kb, document) : document;
      const { document: submitted } = await client.reingestDocument({ documentId: id });
      process.stdout.write(`re-ingesting ${submitted!.fileName} as version ${submitted!.version}\n`);
      if (o.wait) await follow(client, [id]);
    });
  return doc;
}

async function follow(client: QuarryClient, ids: string[]): Promise<void> {
  const { failed } = await followIngestion(client, ids, process.stdout);
  if (failed > 0) process.exitCode = 1;
}

export async function documentIdByName(client: QuarryClient, kb: string, fileName: string): Promise<string> {
  const { documents } = await client.listDocuments({ knowledgeBase: kb });
  const found = documents.find((d) => d.fileName === fileName || d.id === fileName);
  if (!found) throw new ConnectError(`${kb} has no document named ${fileName}`, Code.NotFound);
  return found.id;
}
