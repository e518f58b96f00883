// The worker-thread side of IsolatedParser: runs the built-in parsers on untrusted bytes and
// answers one request at a time. pdf.js, in particular, rejects promises that nobody awaits when a
// file is corrupt; here such a stray rejection is reported to the parent and the thread goes on,
// where on the main thread Node would have ended the whole server.
import { parentPort } from "node:worker_threads";
import type { ParsedDocument } from "../../lib/domain.ts";
import { BuiltinParser } from "./builtin-parser.ts";
import { asParseFailure } from "./parse-failure.ts";

export type ParseRequest = { id: number; bytes: Uint8Array; fileName: string; declaredMimeType: string };
export type ParseResponse =
  | { id: number; parsed: ParsedDocument }
  | { id: number; error: { name: string; message: string } }
  | { stray: string };

const port = parentPort!;
const parser = new BuiltinParser();

process.on("unhandledRejection", (reason) => {
  port.postMessage({ stray: (reason as Error)?.message ?? String(reason) } satisfies ParseResponse);
});

port.on("message", async (request: ParseRequest) => {
  try {
    const parsed = await parser.parse(request);
    port.postMessage({ id: request.id, parsed } satisfies ParseResponse);
  } catch (error) {
    const failure = asParseFailure(error, request.fileName);
    port.postMessage({ id: request.id, error: { name: failure.name, message: failure.message } } satisfies ParseResponse);
  }
});
port.postMessage({ ready: true });
