// Embedded Quarry with an OTLP endpoint: an upload is one trace from the gateway's call through
// every ingestion stage (and the bus hops between them) to READY, and a chat turn is one trace from
// the gateway through answer, embedder and index. The spans are read back from a real OTLP/HTTP
// listener that the real exporter posts to (the Jaeger proof is the engine suite's, see
// docs/OBSERVABILITY.md).
import { execFile, spawn } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { spanAttribute, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../../lib/testing/otlp-receiver.ts";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const run = promisify(execFile);
const SERVER = 2;
const BIN = resolve(process.cwd(), "bin/quarry.mjs");

/** The CLI as a person runs it; its stdout, or a failure with its stderr. */
async function quarryCli(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, ...args], { env: { ...process.env, QUARRY_API_KEY: "" } });
  return stdout;
}
/** `quarry chat` with its questions on stdin, as a script pipes them. */
async function quarryChat(args: string[], input: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, "chat", ...args], { env: { ...process.env, QUARRY_API_KEY: "" }, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.end(input);
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  if (code !== 0) throw new Error(`quarry chat exited ${code}: ${out}`);
  return out;
}
const CONSUMER = 5;
/** The viewer the server is configured with: the CLI prints each trace's page in it. */
const VIEWER = "http://viewer.test/trace/{trace_id}";
const page = (traceId: string) => VIEWER.replace("{trace_id}", traceId);

describe("traces of embedded Quarry", () => {
  let receiver: OtlpReceiver;
  let quarry: EmbeddedQuarryFixture | undefined;
  let documentId = "";
  /** What the document's status and the turn's provenance said, read before the stop. */
  let documentTraceId = "";
  let turnTraceId = "";
  /** `quarry doc show` and `quarry turn show`, run against the traced Quarry. */
  let docShown = "";
  let turnShown = "";
  /** `quarry ask` (a one-off question) and `quarry chat` (two questions of one conversation). */
  let askShown = "";
  let chatShown = "";

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    quarry = await startEmbeddedQuarry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, QUARRY_TRACE_VIEWER_URL: VIEWER } });
    await quarry.client.createKnowledgeBase({ name: "traced" });
    const uploaded = await upload(quarry.client, "traced", "company.md", await fixtureBytes("company.md"));
    documentId = uploaded.document!.id;
    const log = await watchAll(quarry.client, [documentId]);
    expect(lastUpdate(log, documentId).status).toBe(DocumentStatus.READY);
    documentTraceId = (await quarry.client.getDocument({ documentId })).document!.traceId;
    let turnId = "";
    for await (const { event } of quarry.client.chat({ question: COMPANY_FACT.question, knowledgeBases: ["traced"] })) {
      if (event?.event.case === "started") turnId = event.event.value.turnId;
    }
    expect(turnId, "the chat kept its turn").not.toBe("");
    turnTraceId = (await quarry.client.getTurn({ turnId })).turn!.provenance!.traceId;
    docShown = await quarryCli(["doc", "show", documentId, "--url", quarry.url]);
    turnShown = await quarryCli(["turn", "show", turnId, "--url", quarry.url]);
    askShown = await quarryCli(["ask", COMPANY_FACT.question, "--kb", "traced", "--url", quarry.url]);
    chatShown = await quarryChat(["--kb", "traced", "--url", quarry.url], `${COMPANY_FACT.question}\nand when was that?\n`);
    // Stopping flushes what the batch exporter still holds.
    await quarry.stop();
    quarry = undefined;
  });
  afterAll(async () => {
    await quarry?.stop();
    await receiver?.close();
  });

  const traceOf = (root: ReceivedSpan) => receiver.spans.filter((s) => s.traceId === root.traceId);
  const rpcServer = (method: string) => receiver.spans.filter((s) => s.kind === SERVER && s.name === method);

  it("makes one trace of an upload, through every stage and bus hop to READY", () => {
    const [root] = rpcServer("quarry.gateway.v1.QuarryService/UploadDocument");
    expect(root, "the gateway's UploadDocument span").toBeDefined();
    const trace = traceOf(root);
    const consumers = trace.filter((s) => s.kind === CONSUMER);
    const stages = new Set(consumers.map((s) => `${spanAttribute(s, "messaging.consumer.group.name")} ← ${spanAttribute(s, "messaging.destination.name")}`));
    for (const hop of ["parser ← documents.submitted", "chunker ← documents.parsed", "embedder ← chunks.created", "index ← chunks.embedded"]) {
      expect(stages, `${hop} among ${[...stages].join(", ")}`).toContain(hop);
    }
    expect(consumers.filter((s) => spanAttribute(s, "quarry.document_id") !== documentId)).toEqual([]);
    const names = new Set(trace.map((s) => s.name));
    for (const name of ["send documents.submitted", "send documents.parsed", "send chunks.created", "send chunks.embedded", "parse", "split", "embed batch", "engine write"]) {
      expect(names, `${name} in the upload's trace`).toContain(name);
    }
    // Every span of the trace hangs from another of it, up to the gateway's call.
    const ids = new Set(trace.map((s) => s.spanId));
    const orphans = trace.filter((s) => s !== root && !ids.has(s.parentSpanId ?? ""));
    expect(orphans.map((s) => s.name)).toEqual([]);
  });

  it("makes one trace of a chat turn, through answer, embedder and index", () => {
    const [root] = rpcServer("quarry.gateway.v1.QuarryService/Chat").filter((s) => s.traceId === turnTraceId);
    expect(root, "the gateway's Chat span").toBeDefined();
    const trace = traceOf(root);
    const services = new Set(trace.filter((s) => s.kind === SERVER).map((s) => spanAttribute(s, "rpc.service")));
    for (const service of ["quarry.answer.v1.AnswerService", "quarry.embedder.v1.EmbedderService", "quarry.index.v1.IndexService"]) {
      expect(services, `${service} among ${[...services].join(", ")}`).toContain(service);
    }
    const names = new Set(trace.map((s) => s.name));
    expect(names).toContain("fusion");
    expect([...names].some((n) => n.endsWith(" lists") || n.endsWith(" list")), [...names].join(", ")).toBe(true);
    expect(trace.every((s) => s.traceId === root.traceId)).toBe(true);
  });

  it("puts the upload's trace id on the document's status and the chat's on the turn's provenance", () => {
    const [upload] = rpcServer("quarry.gateway.v1.QuarryService/UploadDocument");
    const [chat] = rpcServer("quarry.gateway.v1.QuarryService/Chat").filter((s) => s.traceId === turnTraceId);
    expect(documentTraceId).toMatch(/^[0-9a-f]{32}$/);
    expect(documentTraceId).toBe(upload.traceId);
    expect(turnTraceId).toMatch(/^[0-9a-f]{32}$/);
    expect(turnTraceId).toBe(chat.traceId);
  });

  it("shows them in the CLI: `quarry doc show` and a turn's provenance (`quarry turn show`)", () => {
    const [upload] = rpcServer("quarry.gateway.v1.QuarryService/UploadDocument");
    expect(docShown).toContain(`ingestion trace: ${upload.traceId} ${page(upload.traceId)}\n`);
    expect(turnShown).toContain(`trace: ${turnTraceId}\n`);
  });

  it("prints each turn's trace and its viewer page from `quarry ask` and `quarry chat`", () => {
    // The first Chat call is the client's above; the CLI's three follow, each its own trace.
    const chats = rpcServer("quarry.gateway.v1.QuarryService/Chat").filter((s) => s.traceId !== turnTraceId);
    const printed = (out: string) => [...out.matchAll(/^trace: ([0-9a-f]{32}) (\S+)$/gm)].map((m) => ({ id: m[1]!, link: m[2]! }));
    const asked = printed(askShown);
    const chatted = printed(chatShown);
    expect(asked, askShown).toHaveLength(1);
    expect(chatted, chatShown).toHaveLength(2);
    const ids = [...asked, ...chatted].map((t) => t.id);
    expect(new Set(ids).size, "one trace per turn").toBe(3);
    expect(new Set(chats.map((s) => s.traceId))).toEqual(new Set(ids));
    for (const t of [...asked, ...chatted]) expect(t.link).toBe(page(t.id));
  });
});
