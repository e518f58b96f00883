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
    // No configuration would make Quarry read it: the reading rule refuses it as input.
    expect((binary as ConnectError).code).toBe(Code.InvalidArgument);
    expect((binary as ConnectError).rawMessage).toMatch(/^tool\.exe: Quarry does not read \.exe files/);
    const rtf = await client.parse({ fileName: "memo.rtf", content: bytes("{\\rtf1\\ansi Ferries}") }).catch((e: unknown) => ConnectError.from(e));
    // Tika would read it: a precondition of the deployment, not a fault of the bytes.
    expect((rtf as ConnectError).code).toBe(Code.FailedPrecondition);
  });

  it("lists the formats it reads and checks a file by the rule Parse applies", async () => {
    const { formats } = await client.listReadableFormats({});
    expect(formats.map((f) => f.name)).toEqual(expect.arrayContaining(["PDF document", "Markdown document", "SVG drawing", "plain text"]));
    // The built-ins read Office files; RTF only Tika does.
    expect(formats.flatMap((f) => f.extensions)).toContain("docx");
    expect(formats.flatMap((f) => f.extensions)).not.toContain("rtf");
    expect((await client.checkReadable({ fileName: "chart.svg", head: bytes("<svg><title>t</title></svg>"), size: 27n })).formatName).toBe("SVG drawing");
    const junk = await client.checkReadable({ fileName: "sub.txt", head: Uint8Array.of(0x1a), size: 1n }).catch((e: unknown) => ConnectError.from(e));
    expect((junk as ConnectError).code).toBe(Code.InvalidArgument);
    expect((junk as ConnectError).rawMessage).toMatch(/^sub\.txt is not text/);
    // Parse refuses it the same way.
    const parsed = await client.parse({ fileName: "sub.txt", content: Uint8Array.of(0x1a) }).catch((e: unknown) => ConnectError.from(e));
    expect((parsed as ConnectError).rawMessage).toBe((junk as ConnectError).rawMessage);
  });

  it("parses an SVG drawing into its words alone", async () => {
    const { document } = await client.parse({ fileName: "chart.svg", content: bytes('<svg xmlns="http://www.w3.org/2000/svg"><title>Ingest rate</title><path d="M0 0 L9 9"/><text>1,204 documents</text></svg>') });
    expect(document!.text).toBe("Ingest rate\n1,204 documents");
    expect(document!.mimeType).toBe("image/svg+xml");
  });
});
