// The parser's RPC handler through an in-memory router transport: the service as assembled (the
// built-in parsers on their worker threads, no Tika), with the production error mapping.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { ParserService } from "../../gen/quarry/parser/v1/parser_pb.ts";
import { silentLogger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { SharedDeps } from "../../lib/service-runtime.ts";
import { assembleParser } from "./main.ts";

// The parse RPC reaches no peer and no bus; only the worker (not started here) would.
const noPeers: Peers = { transport: () => { throw new Error("the parse RPC needs no peer"); } };
const parser = assembleParser({}, noPeers, { logger: silentLogger } as SharedDeps);
const client = createClient(ParserService, inProcessTransport(parser.server.routes, parser.server.interceptors));
afterAll(() => parser.close());

const bytes = (s: string) => new TextEncoder().encode(s);

describe("parser routes", () => {
  it("parses Markdown into text with its sections", async () => {
    const { document } = await client.parse({ fileName: "guide.md", content: bytes("# Account\n\nTo reset your password, open Settings.\n\n## Security\n\nCodes expire.\n") });
    expect(document!.text).toContain("To reset your password, open Settings.");
    expect(document!.mimeType).toBe("text/markdown");
    expect(document!.sections.map((s) => s.path)).toEqual([["Account"], ["Account", "Security"]]);
  });

  it("refuses an empty file, and a format it cannot read without Tika, saying why", async () => {
    const empty = await client.parse({ fileName: "empty.txt", content: new Uint8Array() }).catch((e: unknown) => ConnectError.from(e));
    expect((empty as ConnectError).code).toBe(Code.InvalidArgument);
    const binary = await client.parse({ fileName: "tool.exe", content: Uint8Array.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0]) }).catch((e: unknown) => ConnectError.from(e));
    expect(binary).toBeInstanceOf(ConnectError);
    // Unsupported without Tika: a precondition of the deployment, not a fault of the bytes.
    expect((binary as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((binary as ConnectError).rawMessage).toMatch(/tool\.exe|exe/);
  });
});
