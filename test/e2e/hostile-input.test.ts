// Input crafted to hurt, through a real embedded Quarry over real HTTP: a corrupt PDF whose parser
// leaves a promise rejection unhandled (which used to end the process), absurd nesting, a 10 MB
// "word", random bytes, undecodable protobuf and enum values no schema names. Every one of them is
// refused with the right code and a reason a person can read, and the server stays up.
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { RETRYING_MARK } from "../../lib/domain.ts";
import { strayRejectionPdf } from "../support/damaged-documents.ts";
import { describeWithShared } from "../support/shared-material.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const KB = "hostile";
const MAX_DOCUMENT_CHARS = 11_000_000;

/** xorshift32 bytes: the same on every run. */
function randomBytes(length: number, seed: number): Uint8Array {
  let x = seed;
  return Uint8Array.from({ length }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) & 0xff;
  });
}

/** One gRPC call with a raw body, over HTTP/2; resolves with its trailers. */
function rawGrpc(baseUrl: string, path: string, message: Uint8Array): Promise<Record<string, string | string[] | undefined>> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc+proto", te: "trailers" });
    const envelope = Buffer.alloc(5 + message.byteLength);
    envelope.writeUInt32BE(message.byteLength, 1);
    envelope.set(message, 5);
    let headers: Record<string, string | string[] | undefined> = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (trailers) => (headers = { ...headers, ...trailers }));
    stream.on("data", () => {});
    stream.on("end", () => {
      session.close();
      resolve(headers);
    });
    stream.on("error", reject);
    stream.end(envelope);
  });
}

describe("hostile input through a real embedded server", { timeout: 180_000 }, () => {
  let quarry: EmbeddedQuarryFixture;
  const stray: unknown[] = [];
  const onStray = (reason: unknown) => stray.push(reason);

  beforeAll(async () => {
    process.on("unhandledRejection", onStray);
    quarry = await startEmbeddedQuarry({
      // Quick redrives, so a failure wrongly taken for a backend's would show as "gave up" within the test.
      env: { QUARRY_MAX_DOCUMENT_CHARS: String(MAX_DOCUMENT_CHARS), QUARRY_MAX_REDRIVES: "2", QUARRY_REDRIVE_DELAY_MS: "100" },
    });
    await quarry.client.createKnowledgeBase({ name: KB });
  }, 120_000);
  afterAll(async () => {
    process.off("unhandledRejection", onStray);
    await quarry?.stop();
  });

  /** Uploads each file and waits until every one is final; returns each file's last update. */
  async function ingest(files: { name: string; content: Uint8Array }[]) {
    const ids = new Map<string, string>();
    for (const file of files) ids.set(file.name, (await upload(quarry.client, KB, file.name, file.content)).document!.id);
    const log = await watchAll(quarry.client, [...ids.values()], 120_000);
    return new Map([...ids].map(([name, id]) => [name, { last: lastUpdate(log, id), updates: log.get(id)! }]));
  }

  // The damaged file is a real-world PDF from ../shared: no PDF this repository generates (pdfkit,
  // pdf-lib) made pdf.js leave its stray rejection in hundreds of tries.
  describeWithShared("corpus/docs", "a corrupt real-world PDF", () => {
    it("fails a corrupt PDF in PreviewChunks and on upload, with pdf.js's reason, and keeps serving", async () => {
      const pdf = strayRejectionPdf();
      for (const protocol of ["connect", "grpc"] as const) {
        const preview = await failure(() => quarry.clientFor(protocol).previewChunks({ fileName: "patched.pdf", content: pdf, maxChunks: 3 }));
        expect(preview.code, `${protocol}: ${preview.rawMessage}`).toBe(Code.InvalidArgument);
        expect(preview.rawMessage).toMatch(/patched\.pdf could not be parsed|corrupt or unreadable PDF|patched\.pdf is damaged: page 1 of 1 could not be read/);
        expect(preview.rawMessage).toContain("Illegal character: 41");
      }
      const { last } = (await ingest([{ name: "patched.pdf", content: pdf }])).get("patched.pdf")!;
      expect(last.status).toBe(DocumentStatus.FAILED);
      expect(last.error).toContain("Illegal character: 41");
      // pdf.js rejects its stray promise a moment after the failure; it must stay in the parsing thread.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(stray).toEqual([]);
      expect((await quarry.client.listKnowledgeBases({})).knowledgeBases.map((kb) => kb.name)).toContain(KB);
    });
  });

  it("fails JSON nested 100,000 deep at once: InvalidArgument in PreviewChunks, FAILED without retries on upload", async () => {
    const deep = new TextEncoder().encode("[".repeat(100_000) + "]".repeat(100_000));
    const preview = await failure(() => quarry.client.previewChunks({ fileName: "deep.json", content: deep }));
    expect(preview.code).toBe(Code.InvalidArgument);
    expect(preview.rawMessage).toMatch(/nested more than 256 levels deep/);
    const { last, updates } = (await ingest([{ name: "deep.json", content: deep }])).get("deep.json")!;
    expect(last.status).toBe(DocumentStatus.FAILED);
    expect(last.error).toMatch(/nested more than 256 levels deep/);
    expect(updates.map((u) => u.error).join("\n")).not.toContain(RETRYING_MARK);
    expect(last.error).not.toMatch(/gave up/);
  });

  it("previews a 10 MB single word as thousands of bounded chunks, not one 10-million-character chunk", async () => {
    const word = new TextEncoder().encode("x".repeat(10 * 1024 * 1024));
    const preview = await quarry.client.previewChunks({ fileName: "word.txt", content: word, maxChunks: 5 });
    expect(preview.totalChunks).toBeGreaterThan(4000);
    expect(preview.chunks).toHaveLength(5);
    for (const chunk of preview.chunks) expect(chunk.text.length).toBeLessThanOrEqual(preview.settings!.chunkSize * 10);
  });

  it("fails a document over the character limit, naming the limit and its variable", async () => {
    const long = new TextEncoder().encode("plain words of text ".repeat(600_000));
    const { last } = (await ingest([{ name: "long.txt", content: long }])).get("long.txt")!;
    expect(last.status).toBe(DocumentStatus.FAILED);
    expect(last.error).toMatch(/long\.txt yields 12,000,000 characters of text, more than the limit of 11,000,000 per document \(QUARRY_MAX_DOCUMENT_CHARS\)/);
  });

  it("refuses small random files at upload as no text instead of indexing them as text", async () => {
    // Small, where a single-byte code page reads almost anything: about half such files used to end READY,
    // and issue 23 found 13 of 1–7 bytes READY. The reading rule refuses them before they are registered.
    const files = [1, 2, 3, 5, 7, 24, 32, 40, 48, 64, 100].flatMap((size, i) => [
      { name: `random-${size}.txt`, content: randomBytes(size, 17 + i) },
      { name: `random-${size}.md`, content: randomBytes(size, 71 + i) },
    ]);
    // A few random bytes may all be printable ASCII ("#", "sQ"): text by any rule, so not part of the claim.
    const binary = files.filter((f) => ![...f.content].every((b) => b >= 0x20 && b < 0x7f));
    expect(binary.length).toBe(files.length - 2);
    for (const file of binary) {
      const refused = await failure(() => upload(quarry.client, KB, file.name, file.content));
      expect(refused.code, file.name).toBe(Code.InvalidArgument);
      expect(refused.rawMessage, file.name).toMatch(new RegExp(`^${file.name.replace(".", "\\.")} is not text`));
    }
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: KB });
    expect(documents.filter((d) => d.fileName.startsWith("random-"))).toEqual([]);
  });

  it("answers InvalidArgument, not internal, to a request body that is not protobuf (Connect and gRPC)", async () => {
    const garbage = Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const path = "/quarry.gateway.v1.QuarryService/Search";
    const connect = await fetch(`${quarry.url}${path}`, { method: "POST", headers: { "content-type": "application/proto" }, body: garbage });
    expect(connect.status).toBe(400);
    const body = (await connect.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toMatch(/not a valid quarry\.gateway\.v1\.SearchRequest message/);
    const trailers = await rawGrpc(quarry.url, path, garbage);
    expect(trailers["grpc-status"]).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(String(trailers["grpc-message"]))).toMatch(/not a valid quarry\.gateway\.v1\.SearchRequest message/);
    // And the server still answers a well-formed call.
    expect((await quarry.client.listKnowledgeBases({})).knowledgeBases.length).toBeGreaterThan(0);
  });

  it("refuses enum values the schema does not name, over Connect binary and gRPC", async () => {
    const binary = createClient(QuarryService, createConnectTransport({ baseUrl: quarry.url, httpVersion: "1.1", useBinaryFormat: true }));
    for (const [protocol, client] of [["connect binary", binary], ["grpc", quarry.clientFor("grpc")]] as const) {
      const error = await failure(() => client.search({ query: "granite", knowledgeBases: [KB], settings: { mode: 99 as RetrievalMode } }));
      expect(error.code, `${protocol}: ${error.rawMessage}`).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/settings\.mode is 99, which quarry\.common\.v1\.RetrievalMode does not define/);
    }
    // A named value still works.
    await binary.search({ query: "granite", knowledgeBases: [KB], settings: { mode: RetrievalMode.BM25 } });
  });

  it("refuses a knowledge base name with the id syntax, so no name can reach another base", async () => {
    const { knowledgeBase } = await quarry.client.getKnowledgeBase({ knowledgeBase: KB });
    for (const name of [knowledgeBase!.id, "kb_0123456789abcdef0123", "KB_shadow"]) {
      const error = await failure(() => quarry.client.createKnowledgeBase({ name }));
      expect(error.code, name).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/may not start with "kb_"/);
    }
    expect((await quarry.client.getKnowledgeBase({ knowledgeBase: knowledgeBase!.id })).knowledgeBase!.name).toBe(KB);
  });
});
