import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ParserService, file_quarry_parser_v1_parser } from "../../gen/quarry/parser/v1/parser_pb.ts";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.ts";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import { InvalidInputError, NotFoundError } from "../errors.ts";
import { silentLogger } from "../logger.ts";
import { buildServer, COMPRESS_MIN_BYTES, type RunningServer } from "./server.ts";
import { inProcessTransport } from "./transports.ts";

// A parser whose behaviour the request picks, so each test can make the handler succeed or throw.
const built = buildServer({
  serviceNames: [ParserService.typeName],
  files: [file_quarry_parser_v1_parser],
  logger: silentLogger,
  corsOrigins: ["https://console.example"],
  routes: (router) =>
    router.service(ParserService, {
      parse(request) {
        if (request.fileName === "missing") throw new NotFoundError("no such file");
        if (request.fileName === "bad") throw new InvalidInputError("the file is empty");
        if (request.fileName === "crash") throw new Error("secret internals");
        return { document: { text: new TextDecoder().decode(request.content), mimeType: "text/plain", parser: "echo" } };
      },
    }),
});

let server: RunningServer;
beforeAll(async () => {
  server = await built.listen(0);
});
afterAll(() => server.close(100));

const transports = {
  "Connect over HTTP/1.1": () => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
  "gRPC over HTTP/2": () => createGrpcTransport({ baseUrl: server.url }),
  "gRPC-Web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1" }),
};

describe("one port, three protocols", () => {
  for (const [name, transport] of Object.entries(transports)) {
    it(`answers ${name}`, async () => {
      const client = createClient(ParserService, transport());
      const res = await client.parse({ fileName: "a.txt", content: new TextEncoder().encode("hello") });
      expect(res.document?.text).toBe("hello");
    });

    it(`maps domain errors to Connect codes over ${name}`, async () => {
      const client = createClient(ParserService, transport());
      const codeOf = (fileName: string) => client.parse({ fileName }).then(() => undefined, (e) => ConnectError.from(e));
      expect((await codeOf("missing"))?.code).toBe(Code.NotFound);
      const bad = await codeOf("bad");
      expect(bad?.code).toBe(Code.InvalidArgument);
      expect(bad?.rawMessage).toBe("the file is empty");
      const crash = await codeOf("crash");
      expect(crash?.code).toBe(Code.Internal);
      expect(crash?.rawMessage).not.toContain("secret");
    });
  }
});

describe("first bytes that arrive a few at a time", () => {
  // A relay that hands the server what each client sends one byte per event-loop turn, so the
  // HTTP/2 preface and an HTTP/1 request line both arrive split.
  let relay: net.Server;
  let relayUrl: string;
  const open = new Set<net.Socket>();
  beforeAll(async () => {
    relay = net.createServer((client) => {
      const upstream = net.connect(server.port, "127.0.0.1");
      open.add(client).add(upstream);
      upstream.setNoDelay(true);
      let pending = Promise.resolve();
      client.on("data", (chunk: Buffer) => {
        client.pause();
        pending = pending.then(async () => {
          for (const byte of chunk) {
            upstream.write(Buffer.of(byte));
            await new Promise((r) => setTimeout(r, 1));
          }
          client.resume();
        });
      });
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    relayUrl = `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    // Clients keep their connections alive; end them so the relay can close.
    for (const socket of open) socket.destroy();
    await new Promise<void>((r) => relay.close(() => r()));
  });

  it("still tells HTTP/2 from HTTP/1.1 and serves both", async () => {
    const h2 = createClient(ParserService, createGrpcTransport({ baseUrl: relayUrl }));
    const h1 = createClient(ParserService, createConnectTransport({ baseUrl: relayUrl, httpVersion: "1.1" }));
    const content = new TextEncoder().encode("split");
    expect((await h2.parse({ fileName: "a.txt", content })).document?.text).toBe("split");
    expect((await h1.parse({ fileName: "a.txt", content })).document?.text).toBe("split");
  });
});

describe("response compression", () => {
  // A raw Connect unary call that accepts gzip, so the response's encoding can be read.
  const parse = (text: string) =>
    fetch(`${server.url}/${ParserService.typeName}/Parse`, {
      method: "POST",
      headers: { "content-type": "application/json", "accept-encoding": "gzip" },
      body: JSON.stringify({ fileName: "a.txt", content: Buffer.from(text).toString("base64") }),
    });

  it("sends a small answer plain and zips one of COMPRESS_MIN_BYTES or more", async () => {
    const small = await parse("x".repeat(8 * 1024));
    expect(small.status).toBe(200);
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(((await small.json()) as { document: { text: string } }).document.text).toHaveLength(8 * 1024);
    const large = await parse("x".repeat(COMPRESS_MIN_BYTES));
    expect(large.headers.get("content-encoding")).toBe("gzip");
    // fetch unzips it: the body is the same text.
    expect(((await large.json()) as { document: { text: string } }).document.text).toHaveLength(COMPRESS_MIN_BYTES);
  });
});

describe("in-process transport", () => {
  it("applies the same error mapping as the network path", async () => {
    const client = createClient(ParserService, inProcessTransport(built.routes, built.interceptors));
    await expect(client.parse({ fileName: "missing" })).rejects.toMatchObject({ code: Code.NotFound });
  });
});

describe("health and reflection", () => {
  it("reports SERVING for the service and NOT_FOUND for unknown names", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
    expect((await health.check({ service: ParserService.typeName })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    await expect(health.check({ service: "nope.Service" })).rejects.toMatchObject({ code: Code.NotFound });
  });

  it("lists services and serves the file that declares a symbol, with its dependencies", async () => {
    const reflection = createClient(ServerReflection, createGrpcTransport({ baseUrl: server.url }));
    async function* ask() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "quarry.parser.v1.ParserService" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "no.such.Symbol" } };
    }
    const answers = [];
    for await (const res of reflection.serverReflectionInfo(ask())) answers.push(res);
    const list = answers[0].messageResponse;
    expect(list.case).toBe("listServicesResponse");
    if (list.case === "listServicesResponse") {
      expect(list.value.service.map((s) => s.name)).toEqual(expect.arrayContaining([ParserService.typeName, "grpc.health.v1.Health"]));
    }
    const files = answers[1].messageResponse;
    expect(files.case).toBe("fileDescriptorResponse");
    if (files.case === "fileDescriptorResponse") {
      // parser.proto plus common.proto and the timestamp well-known type it imports.
      expect(files.value.fileDescriptorProto.length).toBeGreaterThanOrEqual(3);
    }
    expect(answers[2].messageResponse.case).toBe("errorResponse");
  });

  it("describes its own health and reflection services too, as grpcurl and buf curl ask", async () => {
    const reflection = createClient(ServerReflection, createGrpcTransport({ baseUrl: server.url }));
    async function* ask() {
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "grpc.health.v1.Health" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "grpc.reflection.v1.ServerReflection" } };
    }
    for await (const res of reflection.serverReflectionInfo(ask())) expect(res.messageResponse.case).toBe("fileDescriptorResponse");
  });
});

describe("CORS for browsers", () => {
  it("answers a preflight from an allowed origin with Connect's headers", async () => {
    const res = await fetch(`${server.url}/quarry.parser.v1.ParserService/Parse`, {
      method: "OPTIONS",
      headers: { Origin: "https://console.example", "Access-Control-Request-Method": "POST" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://console.example");
    expect(res.headers.get("access-control-allow-headers")).toMatch(/connect-protocol-version/i);
  });

  it("gives no CORS headers to other origins", async () => {
    const res = await fetch(`${server.url}/quarry.parser.v1.ParserService/Parse`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "Content-Type": "application/json" },
      body: JSON.stringify({ fileName: "a.txt", content: "aGk=" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("a Content-Type the method does not take", () => {
  it("is refused with 415 and a body that says what the method takes", async () => {
    const res = await fetch(`${server.url}/quarry.parser.v1.ParserService/Parse`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "hello" });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toMatch(/ParserService\/Parse takes application\/json or application\/proto .*; this request sent text\/plain/);
  });
});
