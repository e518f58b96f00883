// GetSystemStatus and RedriveDeadLetters over the real transport on an embedded Quarry: an embedding
// endpoint that answers 503 dead-letters a document at the embedder (no automatic redrives here, so
// it stays dead), the status shows it with its reason beside the stage's failures, and once the
// endpoint is back a re-drive brings the document to READY and the dead letter off the list.
import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { GetSystemStatusResponse } from "../../gen/quarry/gateway/v1/system_status_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../../lib/testing/otlp-receiver.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { failure, runQuarryCli, upload } from "./e2e-helpers.ts";

const text = (s: string) => new TextEncoder().encode(s);

describe("the system status and dead-letter re-drive", () => {
  const adminKey = `admin-${randomBytes(12).toString("hex")}`;
  let stub: OpenAiStub;
  let quarry: EmbeddedQuarryFixture;
  let admin: QuarryClient;
  let endpointDown = false;

  beforeAll(async () => {
    stub = await startOpenAiStub({
      embeddingDimension: 32,
      fail: (request) => (endpointDown && request.path === "/v1/embeddings" ? { status: 503, message: "the embedding endpoint is down for maintenance" } : undefined),
    });
    quarry = await startEmbeddedQuarry({
      env: {
        QUARRY_API_KEY: adminKey,
        QUARRY_EMBEDDING_PROVIDER: "openai",
        QUARRY_EMBEDDING_BASE_URL: stub.url,
        QUARRY_EMBEDDING_MODEL: "stub-embedding",
        QUARRY_EMBEDDING_DIMENSION: "32",
        // A dead letter stays dead: what brings the document back is the operator's re-drive.
        QUARRY_MAX_REDRIVES: "0",
      },
    });
    admin = gatewayClient(quarry.url, adminKey);
  }, 120_000);

  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  const status = () => admin.getSystemStatus({});
  const letterOf = (s: GetSystemStatusResponse, documentId: string) => s.deadLetters.find((d) => d.documentId === documentId);

  it("answers admins only", async () => {
    const { secret } = await admin.createApiKey({ name: `reader-${randomBytes(3).toString("hex")}`, role: ApiKeyRole.READER });
    const reader = gatewayClient(quarry.url, secret);
    expect((await failure(() => reader.getSystemStatus({}))).code).toBe(Code.PermissionDenied);
    expect((await failure(() => reader.redriveDeadLetters({ all: true }))).code).toBe(Code.PermissionDenied);
    expect((await failure(() => gatewayClient(quarry.url, "").getSystemStatus({}))).code).toBe(Code.Unauthenticated);
  });

  it("shows every service serving, every stage, and a healthy Quarry with no dead letters", async () => {
    const s = await status();
    expect(s.mode).toBe("embedded");
    expect(s.services.map((x) => [x.name, x.serving, x.error])).toEqual(
      ["gateway", "parser", "chunker", "embedder", "index", "answer"].map((name) => [name, true, ""]),
    );
    expect(s.stages.map((x) => x.stage)).toEqual(["parser", "chunker", "embedder", "index", "index.status"]);
    expect(s.stages.every((x) => x.counted)).toBe(true);
    expect(s.deadLetters).toEqual([]);
    expect(s.windowSeconds).toBe(3600);
    expect(s.notes).toEqual([]);
  });

  it("lists a dead-lettered document with its stage and reason, re-drives it once the cause is gone, and the document ends READY", async () => {
    const kb = (await admin.createKnowledgeBase({ name: `status-${randomBytes(3).toString("hex")}` })).knowledgeBase!;
    endpointDown = true;
    const doc = (await upload(admin, kb.id, "locks.txt", text("Close the lower gates before opening the top paddles."))).document!;

    const dead = await expect.poll(async () => letterOf(await status(), doc.id), { timeout: 90_000, interval: 250 }).toBeDefined().then(async () => letterOf(await status(), doc.id)!);
    expect(dead).toMatchObject({ stage: "embedder", topic: "chunks.created", documentId: doc.id, knowledgeBaseId: kb.id, fileName: "locks.txt", rejected: false, redrives: 0 });
    expect(dead.reason).toMatch(/embedding endpoint is down/);
    expect(dead.id).toMatch(/^embedder:\d+$/);

    const s = await status();
    const embedder = s.stages.find((x) => x.stage === "embedder")!;
    expect(embedder.deadLettered).toBe(1n);
    expect(embedder.retrying).toBeGreaterThanOrEqual(1n);
    expect(embedder.failures.map((f) => f.reason)).toEqual(["unavailable"]);
    expect(s.stages.find((x) => x.stage === "parser")!.handled).toBeGreaterThanOrEqual(1n);
    // The slowest public calls of this test, slowest first; the status's own calls are not among them.
    const slowest = s.slowestRequests.map((r) => r.durationMs);
    expect(slowest.length).toBeGreaterThan(0);
    expect(slowest).toEqual([...slowest].sort((a, b) => b - a));
    const publicMethods = new Set(QuarryService.methods.map((m) => m.name));
    expect(s.slowestRequests.every((r) => publicMethods.has(r.method) && r.method !== "GetSystemStatus" && r.code !== "" && r.traceId === "")).toBe(true);
    // Given up (no automatic redrives), the document says so.
    await expect.poll(async () => (await admin.getDocument({ documentId: doc.id })).document!.errorMessage, { timeout: 30_000 }).toMatch(/gave up/);

    // `quarry status` prints the same: the services, the stage's failures and the dead letter.
    const cli = (...args: string[]) => runQuarryCli([...args, "--url", quarry.url, "--api-key", adminKey]);
    const printed = await cli("status");
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^embedder\s+serving\s+in process/m);
    expect(printed.stdout).toMatch(/^embedder\s+\d+\s+0\s+\d+\s+0\s+1\s.*unavailable \d+$/m);
    expect(printed.stdout).toMatch(new RegExp(`^${dead.id}\\s+embedder\\s+${doc.id}\\s+locks\\.txt\\s.*embedding endpoint is down`, "m"));
    expect(printed.stdout).toMatch(/^SLOWEST REQUESTS\s+MS\s+CODE\s+TRACE\n\w+\s+\d+\s+\w+\s+-$/m);
    const json = await cli("status", "--json");
    expect(JSON.parse(json.stdout).deadLetters.map((d: { id: string }) => d.id)).toContain(dead.id);
    const wrongId = await cli("status", "redrive", "embedder:999999");
    expect(wrongId.code).not.toBe(0);
    expect(wrongId.stderr).toMatch(/dead letter embedder:999999 is not waiting/);
    expect((await runQuarryCli(["status", "--url", quarry.url])).stderr).toMatch(/unauthenticated|API key/i);

    expect((await failure(() => admin.redriveDeadLetters({}))).code).toBe(Code.InvalidArgument);
    expect((await failure(() => admin.redriveDeadLetters({ ids: ["embedder:999999"] }))).code).toBe(Code.NotFound);

    endpointDown = false;
    const { redriven } = await admin.redriveDeadLetters({ ids: [dead.id] });
    expect(redriven.map((r) => r.documentId)).toEqual([doc.id]);

    await expect.poll(async () => (await admin.getDocument({ documentId: doc.id })).document!.status, { timeout: 60_000, interval: 250 }).toBe(DocumentStatus.READY);
    expect(letterOf(await status(), doc.id)).toBeUndefined();
    const { hits } = await admin.search({ query: "lower gates top paddles", knowledgeBases: [kb.id] });
    expect(hits.some((h) => h.chunk!.documentId === doc.id)).toBe(true);
  }, 180_000);
});

describe("the slowest requests with tracing on", () => {
  let receiver: OtlpReceiver;
  let quarry: EmbeddedQuarryFixture;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    quarry = await startEmbeddedQuarry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, QUARRY_TRACE_VIEWER_URL: "http://viewer.test/trace/{trace_id}" } });
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await receiver?.close();
  });

  it("carries each request's trace id, the id of the gateway's exported span for that call, and the viewer's link", async () => {
    await quarry.client.listKnowledgeBases({});
    const s = await quarry.client.getSystemStatus({});
    expect(s.traceViewerUrl).toBe("http://viewer.test/trace/{trace_id}");
    const listed = s.slowestRequests.find((r) => r.method === "ListKnowledgeBases")!;
    expect(listed.traceId).toMatch(/^[0-9a-f]{32}$/);
    await expect
      .poll(() => receiver.spans.filter((span) => span.name === "quarry.gateway.v1.QuarryService/ListKnowledgeBases").map((span) => span.traceId), { timeout: 30_000 })
      .toContain(listed.traceId);
  });
});
