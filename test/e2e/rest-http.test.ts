// The plain-HTTP REST routes driven by curl, as docs/INTEGRATIONS.md shows them: search, ask (server-sent
// events), upload (multipart) and a document's status, each equal to the Connect call it stands
// for — and the Connect JSON form of the same calls with curl, including the clear 415 a plain
// JSON POST to the streaming Chat gets.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { collectChat } from "./e2e-helpers.ts";
import { startHttpWorld, type HttpWorld } from "../support/http-world.ts";

const run = promisify(execFile);
let world: HttpWorld;
let connect: QuarryClient;
let dir: string;

beforeAll(async () => {
  world = await startHttpWorld();
  connect = gatewayClient(world.url, world.keys.editor);
  dir = await mkdtemp(join(tmpdir(), "quarry-rest-"));
}, 180_000);
afterAll(async () => {
  await world?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** curl's body and status (the last line, from --write-out). */
async function curl(...args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run("curl", ["-sS", "-N", "-H", `Authorization: Bearer ${world.keys.editor}`, "-w", "\n%{http_code}", ...args]);
  const at = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
}

const json = (body: unknown) => ["-H", "Content-Type: application/json", "-d", JSON.stringify(body)];

/** The `data:` of each server-sent event, by event name, in order. */
function events(stream: string): { event: string; data: any }[] {
  return stream
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      return { event, data: JSON.parse(data) };
    });
}

describe("plain HTTP with curl", () => {
  it("searches, with the same hits as Connect's Search and as its JSON form", async () => {
    const request = { query: "expense reports", knowledgeBases: [world.a.name] };
    const rest = await curl(`${world.url}/v1/search`, ...json(request));
    expect(rest.status).toBe(200);
    const viaConnectJson = await curl(`${world.url}/quarry.gateway.v1.QuarryService/Search`, ...json(request));
    expect(viaConnectJson.status).toBe(200);
    const ids = (body: string) => (JSON.parse(body).hits as { chunk: { id: string }; score: number }[]).map((h) => [h.chunk.id, h.score]);
    const expected = (await connect.search(request)).hits.map((h) => [h.chunk!.id, h.score]);
    expect(ids(rest.body)).toEqual(expected);
    expect(ids(viaConnectJson.body)).toEqual(expected);
  });

  it("asks, streaming the Connect Chat's events as server-sent events with the same text and citations", async () => {
    const request = { question: "When are expense reports due?", knowledgeBases: [world.a.name] };
    const expected = await collectChat(connect, request);
    const rest = await curl(`${world.url}/v1/ask`, ...json(request));
    expect(rest.status).toBe(200);
    const got = events(rest.body);
    expect(got[0].event).toBe("started");
    expect(got.at(-1)!.event).toBe("done");
    expect(got.filter((e) => e.event === "text").map((e) => e.data.event.text.text).join("")).toBe(expected.text);
    expect(got.filter((e) => e.event === "citation").map((e) => e.data.event.citation.chunkId)).toEqual(expected.citations.map((c) => c.chunkId));
    expect(got.filter((e) => e.event === "final")).toHaveLength(1);
  });

  it("refuses a bad question before the stream starts, with Connect's JSON error", async () => {
    const rest = await curl(`${world.url}/v1/ask`, ...json({ question: "", knowledgeBases: [world.a.name] }));
    expect(rest.status).toBe(400);
    expect(JSON.parse(rest.body)).toMatchObject({ code: "invalid_argument" });
  });

  it("uploads a file with -F, and its status follows it to ready", async () => {
    const path = join(dir, "travel-policy.txt");
    await writeFile(path, "Travel policy. Trains are booked in second class. Flights need approval from a manager.");
    const up = await curl(`${world.url}/v1/knowledge-bases/${world.a.name}/documents`, "-F", `file=@${path}`, "-F", 'metadata={"team":"ops"}');
    expect(up.status, up.body).toBe(200);
    const document = JSON.parse(up.body).document as { id: string; fileName: string; metadata: Record<string, string> };
    expect(document).toMatchObject({ fileName: "travel-policy.txt", metadata: { team: "ops" } });
    let status = "";
    for (const deadline = Date.now() + 60_000; status !== "DOCUMENT_STATUS_READY" && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const got = await curl(`${world.url}/v1/documents/${document.id}`);
      expect(got.status).toBe(200);
      status = JSON.parse(got.body).document.status;
    }
    expect(status).toBe("DOCUMENT_STATUS_READY");
    expect((await connect.getDocument({ documentId: document.id })).document?.status).toBe(DocumentStatus.READY);
    const notForm = await curl(`${world.url}/v1/knowledge-bases/${world.a.name}/documents`, ...json({ file: "x" }));
    expect(notForm.status).toBe(400);
    expect(JSON.parse(notForm.body).message).toMatch(/multipart\/form-data/);
  });

  it("explains a plain JSON POST to the streaming Connect Chat instead of a bare 415", async () => {
    const bare = await curl(`${world.url}/quarry.gateway.v1.QuarryService/Chat`, ...json({ question: "When are expense reports due?", knowledgeBases: [world.a.name] }));
    expect(bare.status).toBe(415);
    const body = JSON.parse(bare.body) as { code: string; message: string };
    expect(body.message).toMatch(/QuarryService\/Chat is a streaming method: it takes application\/connect\+json/);
    expect(body.message).toMatch(/this request sent application\/json/);
    expect(body.message).toMatch(/\/v1\/ask/);
  });

  it("serves the same routes over HTTP/2 (prior knowledge), as the one port does for gRPC", async () => {
    const search = await curl("--http2-prior-knowledge", `${world.url}/v1/search`, ...json({ query: "expense reports", knowledgeBases: [world.a.name] }));
    expect(search.status).toBe(200);
    expect(JSON.parse(search.body).hits.length).toBeGreaterThan(0);
    const ask = await curl("--http2-prior-knowledge", `${world.url}/v1/ask`, ...json({ question: "When are expense reports due?", knowledgeBases: [world.a.name] }));
    expect(ask.status).toBe(200);
    expect(events(ask.body).at(-1)!.event).toBe("done");
    const refused = await run("curl", ["-sS", "--http2-prior-knowledge", "-w", "%{http_code}", "-o", "/dev/null", `${world.url}/v1/models`]);
    expect(refused.stdout).toBe("401");
  });
});
