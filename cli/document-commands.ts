// `quarry doc list|show|delete` and `quarry chunk edit|disable|enable|add`: find a document, open it
// as its chunks, and correct them (docs/DOCUMENTS.md). A document is named by its id, or by its file
// name with --kb; a chunk by its id, a prefix of it that only one of the document's chunks has, or
// #N, its number as `doc show` and the console list it.
import { traceLine } from "./trace-line.ts";
import { readFile } from "node:fs/promises";
import type { Command, Option } from "commander";
import { Code, ConnectError } from "@connectrpc/connect";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus, type Chunk, type Document } from "../gen/quarry/common/v1/common_pb.ts";
import { writeTable } from "./commands.ts";
import { documentIdByName } from "./edit-commands.ts";
import { UsageError } from "./error-report.ts";
import { plural } from "./ingest-progress.ts";

type WholeNumber = (min: number) => (value: string) => number;

interface DocumentFlags {
  kb?: string;
  url: string;
}

export function registerDocumentCommands(program: Command, doc: Command, urlOption: () => Option, wholeNumber: WholeNumber): void {
  const kbOption = ["--kb <name>", "the knowledge base, when naming the document by its file name"] as const;

  doc
    .command("list")
    .description("the documents of a knowledge base, with their ids")
    .requiredOption("--kb <name>", "the knowledge base")
    .addOption(urlOption())
    .action(async (o: { kb: string; url: string }) => {
      const { documents } = await gatewayClient(o.url).listDocuments({ knowledgeBase: o.kb });
      if (documents.length === 0) return void process.stdout.write(`${o.kb} has no documents yet; \`quarry ingest FOLDER --kb ${o.kb}\` adds some\n`);
      const rows = documents.map((d) => [d.id, statusOf(d), plural(d.chunkCount, "chunk"), d.enabled ? "yes" : "no", d.fileName]);
      writeTable([["ID", "STATUS", "CHUNKS", "ENABLED", "FILE"], ...rows], process.stdout);
    });

  doc
    .command("show")
    .description("open a document: its chunks in order, with section, page and edit marks")
    .argument("<document>", "the document's id, or its file name with --kb")
    .option(...kbOption)
    .option("--query <text>", "only the chunks whose text contains this (case, width and spaces aside)")
    .addOption(urlOption())
    .action(async (document: string, o: DocumentFlags & { query?: string }) => {
      const client = gatewayClient(o.url);
      const opened = await client.listDocumentChunks({ documentId: await documentId(client, document, o), query: o.query ?? "" });
      const d = opened.document!;
      const shown = o.query ? `; "${o.query}" is in ${plural(opened.chunks.length, "chunk")}` : "";
      process.stdout.write(`${d.fileName} (${d.id}) — ${statusOf(d)}, ${plural(opened.total, "chunk")}${shown}${d.enabled ? "" : ", disabled"}\n`);
      if (d.chunkEdits) process.stdout.write(`this version's re-ingest: ${d.chunkEdits}\n`);
      process.stdout.write(await traceLine(client, "ingestion trace", d.traceId));
      for (const chunk of opened.chunks) process.stdout.write(`\n${chunkHeading(chunk)}\n${indent(chunk.text)}\n`);
    });

  doc
    .command("delete")
    .description("delete a document, its chunks and its kept original")
    .argument("<document>", "the document's id, or its file name with --kb")
    .option(...kbOption)
    .addOption(urlOption())
    .action(async (document: string, o: DocumentFlags) => {
      const client = gatewayClient(o.url);
      const id = await documentId(client, document, o);
      const { document: d } = await client.getDocument({ documentId: id });
      await client.deleteDocument({ documentId: id });
      process.stdout.write(`deleted ${d!.fileName} (${id})\n`);
    });

  const chunk = program.command("chunk").description("correct a document's chunks (see `quarry doc show`)");

  chunk
    .command("edit")
    .description("replace a chunk's text: re-embedded, marked edited, searchable at once")
    .argument("<document>", "the document's id, or its file name with --kb")
    .argument("<chunk>", "the chunk's id, a prefix only it has, or #N (its number in `quarry doc show`)")
    .argument("[text]", "the new text; else --file, else standard input")
    .option("--file <path>", "read the new text from a file")
    .option("--expect-version <n>", "edit only if the chunk is still at this version", wholeNumber(1))
    .option(...kbOption)
    .addOption(urlOption())
    .action(async (document: string, chunkRef: string, text: string | undefined, o: DocumentFlags & { file?: string; expectVersion?: number }) => {
      const client = gatewayClient(o.url);
      const id = await documentId(client, document, o);
      const target = await chunkIn(client, id, chunkRef);
      const { chunk: edited } = await client.editChunk({ documentId: id, chunkId: target.id, text: await textFrom(text, o.file), expectedVersion: o.expectVersion ?? 0 });
      process.stdout.write(edited!.version === target.version ? `unchanged ${chunkHeading(edited!)}\n` : `edited ${chunkHeading(edited!)}\n`);
    });

  for (const [name, enabled] of [["disable", false], ["enable", true]] as const) {
    chunk
      .command(name)
      .description(enabled ? "let search return a disabled chunk again" : "keep a chunk out of search (it stays in the document)")
      .argument("<document>", "the document's id, or its file name with --kb")
      .argument("<chunk>", "the chunk's id, a prefix only it has, or #N (its number in `quarry doc show`)")
      .option(...kbOption)
      .addOption(urlOption())
      .action(async (document: string, chunkRef: string, o: DocumentFlags) => {
        const client = gatewayClient(o.url);
        const id = await documentId(client, document, o);
        const target = await chunkIn(client, id, chunkRef);
        const { chunk: changed } = await client.setChunkEnabled({ documentId: id, chunkId: target.id, enabled });
        process.stdout.write(`${enabled ? "enabled" : "disabled"} ${chunkHeading(changed!)}\n`);
      });
  }

  chunk
    .command("add")
    .description("add a chunk written by hand after the document's last chunk")
    .argument("<document>", "the document's id, or its file name with --kb")
    .argument("[text]", "the text; else --file, else standard input")
    .option("--file <path>", "read the text from a file")
    .option("--section <path>", 'the section it belongs under, e.g. "Manual > Safety"')
    .option("--page <n>", "the page it belongs on", wholeNumber(1))
    .option(...kbOption)
    .addOption(urlOption())
    .action(async (document: string, text: string | undefined, o: DocumentFlags & { file?: string; section?: string; page?: number }) => {
      const client = gatewayClient(o.url);
      const id = await documentId(client, document, o);
      const sectionPath = (o.section ?? "").split(">").map((s) => s.trim()).filter(Boolean);
      const { chunk: added } = await client.addChunk({ documentId: id, text: await textFrom(text, o.file), sectionPath, page: o.page ?? 0 });
      process.stdout.write(`added ${chunkHeading(added!)}\n`);
    });
}

async function documentId(client: QuarryClient, document: string, o: DocumentFlags): Promise<string> {
  return o.kb ? documentIdByName(client, o.kb, document) : document;
}

/** The document's chunk with this id, the only one whose id starts with it, or `#N`: the Nth as `quarry doc show` numbers them. */
async function chunkIn(client: QuarryClient, documentId: string, ref: string): Promise<Chunk> {
  const { chunks, document } = await client.listDocumentChunks({ documentId });
  const position = /^#(\d+)$/.exec(ref);
  if (position) {
    const at = chunks.find((c) => c.index + 1 === Number(position[1]));
    if (at) return at;
    throw new ConnectError(`${document!.fileName} has no chunk ${ref} (it has ${chunks.length}); \`quarry doc show ${documentId}\` lists them`, Code.NotFound);
  }
  const exact = chunks.find((c) => c.id === ref);
  if (exact) return exact;
  const matching = ref.length >= 4 ? chunks.filter((c) => c.id.startsWith(ref)) : [];
  if (matching.length === 1) return matching[0];
  if (matching.length > 1) throw new UsageError(`${matching.length} chunks of ${document!.fileName} have ids starting with ${ref}; give more of the id`);
  throw new ConnectError(`${document!.fileName} has no chunk ${ref}; \`quarry doc show ${documentId}\` lists its chunks`, Code.NotFound);
}

async function textFrom(argument: string | undefined, file: string | undefined): Promise<string> {
  if (argument !== undefined && file !== undefined) throw new UsageError("give the text or --file, not both");
  if (argument !== undefined) return argument;
  if (file !== undefined) return readFile(file, "utf8");
  if (process.stdin.isTTY) throw new UsageError("give the text as an argument, with --file, or on standard input");
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

/** `#3 1f2e…  Safety > Ladders  p. 4  edited v2  disabled`: where the chunk is (numbered from 1, as the console shows) and what was done to it. */
function chunkHeading(c: Chunk): string {
  const marks = [
    c.sectionPath.join(" > "),
    c.page ? (c.pageEnd > c.page ? `pp. ${c.page}–${c.pageEnd}` : `p. ${c.page}`) : "",
    c.manual ? "manual" : "",
    c.edited ? `edited v${c.version}` : "",
    c.disabled ? "disabled" : "",
  ].filter(Boolean);
  return [`#${c.index + 1}`, c.id, ...marks].join("  ");
}

function indent(text: string): string {
  return text.split("\n").map((line) => `    ${line}`).join("\n");
}

function statusOf(d: Document): string {
  return DocumentStatus[d.status].toLowerCase();
}
