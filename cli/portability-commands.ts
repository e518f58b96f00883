// `quarry export KB FILE` and `quarry import FILE [--as NAME]`: a knowledge base as a portable
// archive (docs/PORTABILITY.md), streamed both ways so a big base is never held in memory.
import { createReadStream, createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Command, Option } from "commander";
import { create } from "@bufbuild/protobuf";
import { ImportKnowledgeBaseStreamRequestSchema } from "../gen/quarry/gateway/v1/portability_pb.ts";
import { gatewayClient } from "../client/gateway-client.ts";

/** Bytes per message sent: well under the gateway's message limit. */
const PIECE_BYTES = 1024 * 1024;

export function registerPortabilityCommands(program: Command, urlOption: () => Option): void {
  program
    .command("export")
    .description("write a knowledge base to an archive file: settings, model, documents, chunks and their vectors")
    .argument("<kb>", "the knowledge base's name or id")
    .argument("<file>", "the archive to write (conventionally .quarry.gz)")
    .option("--without-vectors", "leave the vectors out: a smaller file whose import embeds every chunk again")
    .option("--with-assistants", "also write the assistants that mount the base, with their corrections (their mounts of other bases are left out)")
    .addOption(urlOption())
    .action(async (kb: string, file: string, o: { withoutVectors?: boolean; withAssistants?: boolean; url: string }) => {
      // Written beside the file and renamed when whole, so a failed export leaves no truncated archive.
      const partial = `${file}.partial`;
      const stream = gatewayClient(o.url).exportKnowledgeBase({ knowledgeBase: kb, withoutVectors: o.withoutVectors ?? false, withAssistants: o.withAssistants ?? false });
      async function* bytes() {
        for await (const piece of stream) yield piece.data;
      }
      try {
        await pipeline(Readable.from(bytes()), createWriteStream(partial));
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      await rename(partial, file);
      const what = [o.withoutVectors ? "without vectors" : "", o.withAssistants ? "with its assistants" : ""].filter(Boolean).join(", ");
      process.stdout.write(`exported ${kb} to ${file}${what ? ` (${what})` : ""}\n`);
    });
  program
    .command("import")
    .description("make a new knowledge base from an archive file (no parsing; no embedding when it carries the same model's vectors)")
    .argument("<file>", "an archive written by quarry export")
    .option("--as <name>", "the new base's name (default: the name in the archive)")
    .addOption(urlOption())
    .action(async (file: string, o: { as?: string; url: string }) => {
      async function* requests() {
        yield create(ImportKnowledgeBaseStreamRequestSchema, { part: { case: "options", value: { name: o.as ?? "" } } });
        for await (const piece of createReadStream(file, { highWaterMark: PIECE_BYTES })) {
          yield create(ImportKnowledgeBaseStreamRequestSchema, { part: { case: "data", value: piece as Buffer } });
        }
      }
      const res = await gatewayClient(o.url).importKnowledgeBaseStream(requests());
      const how = res.reembedded ? "chunks embedded again (the archive had no vectors)" : "vectors from the archive";
      process.stdout.write(`imported ${res.knowledgeBase?.name}: ${res.documents} documents, ${res.chunks} chunks, ${how}\n`);
      for (const assistant of res.assistants) process.stdout.write(`assistant ${assistant.name} (${assistant.id}), mounting ${res.knowledgeBase?.name}\n`);
      if (res.assistants.length > 0) process.stdout.write(`${res.corrections} corrections\n`);
      for (const note of res.notes) process.stdout.write(`note: ${note}\n`);
    });
}
