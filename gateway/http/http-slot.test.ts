// The slot on a real server, with the real authenticator (a bootstrap key): a raw route — the shape
// an MCP streamable-HTTP transport takes — reads its own body, streams its response while it is
// still running and knows its caller; JSON bodies over the limit, a wrong method and an unknown
// path get clear answers; a route's failure is written in its own shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../lib/logger.ts";
import { buildServer, type RunningServer } from "../../lib/rpc/server.ts";
import { ApiKeyAuthenticator } from "../access/authenticator.ts";
import type { GuardedRoute } from "./http-route.ts";
import { httpSlot } from "./http-slot.ts";
import { sendJson, writeText } from "./wire.ts";

const KEY = "slot-test-bootstrap-key";
let release: () => void = () => {};
const released = new Promise<void>((r) => (release = r));

const raw: GuardedRoute = {
  name: "test.raw-stream",
  methods: ["POST"],
  path: "/raw",
  role: "reader",
  scope: { kind: "per-call" },
  body: "raw",
  fail: (res, f) => sendJson(res, f.status, { failed: f.message }),
  async handle(call) {
    let body = "";
    for await (const chunk of call.req as AsyncIterable<Buffer>) body += chunk.toString("utf8");
    call.res.writeHead(200, { "Content-Type": "text/event-stream" });
    writeText(call.res, `data: ${JSON.stringify({ caller: call.principal.name, role: call.principal.role, got: body })}\n\n`);
    await released;
    call.res.end("data: done\n\n");
  },
};
const json: GuardedRoute = {
  name: "test.json",
  methods: ["POST"],
  path: "/things/:id",
  role: "editor",
  scope: { kind: "check", targets: (input) => ({ knowledgeBases: [input.params.id] }) },
  body: "json",
  fail: (res, f) => sendJson(res, f.status, { failed: f.message, code: f.code }),
  async handle(call) {
    sendJson(call.res, 200, { id: call.params.id, body: call.body });
  },
};

let server: RunningServer;
beforeAll(async () => {
  const authenticator = new ApiKeyAuthenticator({ index: undefined as never, bootstrapKey: KEY, openWithoutKeys: false });
  const slot = httpSlot({
    routes: [raw, json, { name: "test.catch-all", methods: ["GET"], path: "/*", open: "a test's catch-all", serve: (_req, res) => sendJson(res, 200, { caughtAll: true }) }],
    authenticator,
    checkScope: async () => {},
    callsFor: () => ({ gateway: undefined as never, embedder: undefined as never }),
    maxJsonBytes: 64,
    logger: silentLogger,
  });
  server = await buildServer({ routes: () => {}, serviceNames: [], files: [], logger: silentLogger, corsOrigins: ["https://console.example"], fallback: slot }).listen(0);
});
afterAll(() => server.close(100));

const auth = { Authorization: `Bearer ${KEY}` };

describe("the HTTP slot", () => {
  it("hands an authenticated raw route the request and lets it stream, with the caller known", async () => {
    const res = await fetch(`${server.url}/raw`, { method: "POST", headers: auth, body: "raw bytes, not JSON" });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // The first event arrived while the handler still waits: the response streams.
    expect(JSON.parse(first.replace(/^data: /, ""))).toEqual({ caller: "QUARRY_API_KEY", role: "admin", got: "raw bytes, not JSON" });
    release();
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe("data: done\n\n");
  });

  it("refuses before the handler runs, in the route's own error shape", async () => {
    const missing = await fetch(`${server.url}/raw`, { method: "POST", body: "x" });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ failed: expect.stringMatching(/needs an API key/) });
  });

  it("reads JSON bodies up to the limit, and names path parameters", async () => {
    const ok = await fetch(`${server.url}/things/a%20b`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: '{"n":1}' });
    expect(await ok.json()).toEqual({ id: "a b", body: { n: 1 } });
    const big = await fetch(`${server.url}/things/x`, { method: "POST", headers: auth, body: JSON.stringify({ n: "x".repeat(100) }) });
    expect(big.status).toBe(413);
    const broken = await fetch(`${server.url}/things/x`, { method: "POST", headers: auth, body: "{nope" });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { failed: string }).failed).toMatch(/not valid JSON/);
  });

  it("answers a wrong method on a route's own path with 405 and Allow (not the catch-all), and leaves the rest to the catch-all", async () => {
    // GET fits the catch-all's method, but /things/:id is the route this path names.
    const wrong = await fetch(`${server.url}/things/x`, { headers: auth });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    const caught = await fetch(`${server.url}/nothing-here`);
    expect(await caught.json()).toEqual({ caughtAll: true });
    // A browser opening that path (the console's /retrieval page, where Dify POSTs) gets the page.
    const page = await fetch(`${server.url}/things/x`, { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(await page.json()).toEqual({ caughtAll: true });
  });

  it("follows the Connect API's CORS rules: an allowed origin's preflight and answers carry them, another origin's do not", async () => {
    const preflight = await fetch(`${server.url}/things/x`, {
      method: "OPTIONS",
      headers: { Origin: "https://console.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, x-stainless-lang" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://console.example");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
    // What a browser's openai client sends beside the key.
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/x-stainless-lang/);
    const stranger = await fetch(`${server.url}/things/x`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-stainless-lang" },
    });
    expect(stranger.headers.get("access-control-allow-headers")).toBeNull();
    const allowed = await fetch(`${server.url}/things/x`, { method: "POST", headers: { ...auth, Origin: "https://console.example" }, body: "{}" });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://console.example");
    const other = await fetch(`${server.url}/things/x`, { method: "POST", headers: { ...auth, Origin: "https://evil.example" }, body: "{}" });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});
