// Interoperability: the gateway called by @grpc/grpc-js, an independent gRPC implementation, with
// the .proto files loaded at run time by @grpc/proto-loader — none of Quarry's generated code on
// the client side. If Quarry's gRPC is only "gRPC as connect-es speaks it", these fail.
import { resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

const PROTO_DIR = resolve(process.cwd(), "proto");

type Callback<T> = (error: grpc.ServiceError | null, response?: T) => void;
type AnyClient = grpc.Client & Record<string, any>;

function unary<T>(client: AnyClient, method: string, request: object, metadata = new grpc.Metadata()): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + 30_000);
    (client[method] as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: Callback<T>) => void)(request, metadata, { deadline }, (error, response) =>
      error ? reject(error) : resolve(response!),
    );
  });
}

function serverStream<T>(client: AnyClient, method: string, request: object): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    const call: grpc.ClientReadableStream<T> = client[method](request, { deadline: new Date(Date.now() + 120_000) });
    call.on("data", (message: T) => out.push(message));
    call.on("error", reject);
    call.on("end", () => resolve(out));
  });
}

describe("the gateway, called by @grpc/grpc-js with run-time loaded protos", () => {
  let quarry: EmbeddedQuarryFixture;
  let address: string;
  let quarryClient: AnyClient;
  let healthClient: AnyClient;
  let reflectionClient: AnyClient;

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    address = new URL(quarry.url).host;
    const definition = protoLoader.loadSync(
      ["quarry/gateway/v1/gateway.proto", "grpc/health/v1/health.proto", "grpc/reflection/v1/reflection.proto"],
      { includeDirs: [PROTO_DIR], keepCase: false, longs: String, enums: String, defaults: true, oneofs: true },
    );
    const loaded = grpc.loadPackageDefinition(definition) as any;
    const credentials = grpc.credentials.createInsecure();
    quarryClient = new loaded.quarry.gateway.v1.QuarryService(address, credentials);
    healthClient = new loaded.grpc.health.v1.Health(address, credentials);
    reflectionClient = new loaded.grpc.reflection.v1.ServerReflection(address, credentials);
  });
  afterAll(async () => {
    for (const client of [quarryClient, healthClient, reflectionClient]) client?.close();
    await quarry?.stop();
  });

  it("creates and lists knowledge bases (unary), with enums as names and 64-bit counts as strings", async () => {
    const created = await unary<any>(quarryClient, "createKnowledgeBase", { name: "interop", description: "from grpc-js" });
    expect(created.knowledgeBase.name).toBe("interop");
    expect(created.knowledgeBase.embeddingDimension).toBe(384);
    expect(created.knowledgeBase.chunking.strategy).toBe("CHUNKING_STRATEGY_RECURSIVE");
    expect(created.knowledgeBase.documentCount).toBe("0");
    expect(Number(created.knowledgeBase.createdAt.seconds)).toBeGreaterThan(1_600_000_000);

    const listed = await unary<any>(quarryClient, "listKnowledgeBases", {});
    expect(listed.knowledgeBases.map((kb: any) => kb.name)).toEqual(["interop"]);
    expect(listed.knowledgeBases[0].id).toBe(created.knowledgeBase.id);
  });

  it("maps a missing knowledge base to the gRPC status NOT_FOUND with the message in details", async () => {
    const error = await unary(quarryClient, "getKnowledgeBase", { knowledgeBase: "nope" }).catch((e: grpc.ServiceError) => e);
    expect((error as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
    expect((error as grpc.ServiceError).details).toContain("nope");
  });

  it("uploads bytes and streams WatchIngestion to READY, then streams a Chat answer with citations (server streaming)", async () => {
    const content = await fixtureBytes("company.md");
    const uploaded = await unary<any>(quarryClient, "uploadDocument", {
      header: { knowledgeBase: "interop", fileName: "company.md", mimeType: "text/markdown", metadata: { source: "grpc-js" } },
      content,
    });
    expect(uploaded.unchanged).toBe(false);
    expect(uploaded.document.sizeBytes).toBe(String(content.byteLength));
    expect(uploaded.document.metadata).toEqual({ source: "grpc-js" });

    const updates = await serverStream<any>(quarryClient, "watchIngestion", { documentIds: [uploaded.document.id] });
    expect(updates.length).toBeGreaterThan(0);
    const last = updates.at(-1);
    expect(last.documentId).toBe(uploaded.document.id);
    expect(last.status, last.error).toBe("DOCUMENT_STATUS_READY");
    expect(last.percent).toBe(100);
    expect(last.chunkCount).toBeGreaterThan(0);

    const events = await serverStream<any>(quarryClient, "chat", { question: COMPANY_FACT.question, knowledgeBases: ["interop"] });
    const kinds = events.map((e) => e.event.event);
    expect(kinds.at(-1)).toBe("final");
    const text = events.filter((e) => e.event.event === "text").map((e) => e.event.text.text).join("");
    expect(text).toContain(COMPANY_FACT.word);
    const citations = events.filter((e) => e.event.event === "citation").map((e) => e.event.citation);
    expect(citations.length).toBeGreaterThan(0);
    for (const c of citations) {
      expect(c.fileName).toBe("company.md");
      expect(c.documentId).toBe(uploaded.document.id);
      expect(text).toContain(`[${c.marker}]`);
    }
    expect(events.at(-1).event.final.extractive).toBe(true);
  });

  it("answers the standard health check for the server and the Quarry service", async () => {
    expect(await unary<any>(healthClient, "check", { service: "" })).toEqual({ status: "SERVING" });
    expect(await unary<any>(healthClient, "check", { service: "quarry.gateway.v1.QuarryService" })).toEqual({ status: "SERVING" });
    const unknown = await unary(healthClient, "check", { service: "no.such.Service" }).catch((e: grpc.ServiceError) => e);
    expect((unknown as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
  });

  it("lists the services and serves their descriptors through server reflection (bidi stream)", async () => {
    const call: grpc.ClientDuplexStream<any, any> = reflectionClient.serverReflectionInfo({ deadline: new Date(Date.now() + 30_000) });
    const responses: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on("data", (r: any) => responses.push(r));
      call.on("error", reject);
      call.on("end", resolve);
    });
    call.write({ host: "", listServices: "*" });
    call.write({ host: "", fileContainingSymbol: "quarry.gateway.v1.QuarryService" });
    call.write({ host: "", fileContainingSymbol: "quarry.gateway.v1.QuarryService.Chat" });
    call.write({ host: "", fileContainingSymbol: "no.such.Symbol" });
    call.end();
    await done;

    expect(responses.map((r) => r.messageResponse)).toEqual([
      "listServicesResponse",
      "fileDescriptorResponse",
      "fileDescriptorResponse",
      "errorResponse",
    ]);
    const services = responses[0].listServicesResponse.service.map((s: any) => s.name);
    expect(services).toContain("quarry.gateway.v1.QuarryService");
    expect(services).toContain("grpc.health.v1.Health");
    expect(services).toContain("grpc.reflection.v1.ServerReflection");
    expect(responses[0].originalRequest.listServices).toBe("*");

    for (const r of responses.slice(1, 3)) {
      const files = r.fileDescriptorResponse.fileDescriptorProto.map((bytes: Buffer) => fromBinary(FileDescriptorProtoSchema, bytes));
      const names = files.map((f: any) => f.name);
      expect(names[0]).toBe("quarry/gateway/v1/gateway.proto");
      // The dependencies come along, so a client can build every message type.
      expect(names).toEqual(expect.arrayContaining(["quarry/common/v1/common.proto", "quarry/answer/v1/answer.proto", "google/protobuf/timestamp.proto"]));
      const service = files[0].service.find((s: any) => s.name === "QuarryService");
      expect(service.method.map((m: any) => m.name)).toEqual(expect.arrayContaining(["Chat", "UploadDocumentStream", "WatchIngestion"]));
    }
    expect(responses[3].errorResponse.errorCode).toBe(grpc.status.NOT_FOUND);
  });
});
