// An internal service's GET /metrics: its RPCs counted by method and code, behind the internal token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ParserService, file_quarry_parser_v1_parser } from "../../gen/quarry/parser/v1/parser_pb.ts";
import { InvalidInputError } from "../errors.ts";
import { silentLogger } from "../logger.ts";
import { PrometheusMetrics } from "../metrics/prometheus-metrics.ts";
import { buildServer, type RunningServer } from "./server.ts";
import { requireInternalToken, sendInternalToken } from "./internal-token.ts";

const TOKEN = "metrics-endpoint-test-token";
const metrics = new PrometheusMetrics({ defaultMetrics: false });
const built = buildServer({
  serviceNames: [ParserService.typeName],
  files: [file_quarry_parser_v1_parser],
  logger: silentLogger,
  metrics,
  routes: (router) =>
    router.service(ParserService, {
      parse(request) {
        if (request.fileName === "bad") throw new InvalidInputError("the file is empty");
        return { document: { text: "ok", mimeType: "text/plain", parser: "echo" } };
      },
    }),
});

let server: RunningServer;
beforeAll(async () => {
  server = await built.listen(0, "127.0.0.1", { interceptors: [requireInternalToken(TOKEN)], metricsToken: TOKEN });
});
afterAll(() => server.close());

describe("an internal service's /metrics", () => {
  it("counts each call by method and code, and answers only with the internal token", async () => {
    const parser = createClient(ParserService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: sendInternalToken(TOKEN) }));
    await parser.parse({ fileName: "a.txt", content: new Uint8Array([1]) });
    await parser.parse({ fileName: "b.txt", content: new Uint8Array([1]) });
    await expect(parser.parse({ fileName: "bad", content: new Uint8Array([1]) })).rejects.toThrow(/empty/);

    const refused = await fetch(`${server.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toMatch(/QUARRY_INTERNAL_TOKEN/);
    const wrong = await fetch(`${server.url}/metrics`, { headers: { Authorization: "Bearer not-the-token" } });
    expect(wrong.status).toBe(401);

    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('quarry_rpc_server_duration_seconds_count{service="quarry.parser.v1.ParserService",method="Parse",code="ok"} 2');
    expect(text).toContain('quarry_rpc_server_duration_seconds_count{service="quarry.parser.v1.ParserService",method="Parse",code="invalid_argument"} 1');
    expect((await fetch(`${server.url}/elsewhere`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });
});
