// The door of every plain-HTTP route on the gateway's port (gateway/http/): table-driven over the
// registered routes, so a new route without a row here fails. Each guarded route must refuse a
// request without a key and one with a wrong key with the authenticator's own words (a route that
// skipped its door would answer, or fail differently), refuse a key whose role is too low, and for a
// key limited to tenant A refuse tenant B's base, document or assistant — or, for a listing, show
// only A's. The console's files are the only open route.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRoutes } from "../../gateway/http/http-routes.ts";
import { isOpen, type GuardedRoute } from "../../gateway/http/http-route.ts";
import { DirBlobStore } from "../../lib/blobs/dir-blob-store.ts";
import { silentLogger } from "../../lib/logger.ts";
import { startHttpWorld, type HttpWorld } from "../support/http-world.ts";

interface Probe {
  method: "GET" | "POST";
  path: string;
  json?: unknown;
  form?: () => FormData;
  headers?: Record<string, string>;
}

type Tenant = HttpWorld["a"];
const post = (path: string, json: unknown): Probe => ({ method: "POST", path, json });
const get = (path: string): Probe => ({ method: "GET", path });
const file = (text: string) => () => {
  const form = new FormData();
  form.set("file", new Blob([text], { type: "text/plain" }), `probe-${randomBytes(3).toString("hex")}.txt`);
  return form;
};

/** One row per guarded route: a request on tenant A's data, and (for scope-checked routes) the same on B's. */
const PROBES: Record<string, { on: (t: Tenant) => Probe }> = {
  "openai.chat-completions": { on: (t) => post("/v1/chat/completions", { model: t.assistant, messages: [{ role: "user", content: "When are expense reports due?" }] }) },
  "openai.models": { on: () => get("/v1/models") },
  "openai.embeddings": { on: () => post("/v1/embeddings", { input: "expense reports", encoding_format: "float" }) },
  "dify.retrieval": { on: (t) => post("/retrieval", { knowledge_id: t.name, query: "expense reports", retrieval_setting: { top_k: 3, score_threshold: 0 } }) },
  "rest.search": { on: (t) => post("/v1/search", { query: "expense reports", knowledgeBases: [t.id] }) },
  "rest.ask": { on: (t) => post("/v1/ask", { question: "When are expense reports due?", knowledgeBases: [t.name] }) },
  "rest.upload": { on: (t) => ({ method: "POST", path: `/v1/knowledge-bases/${t.name}/documents`, form: file("a probe upload") }) },
  "rest.document": { on: (t) => get(`/v1/documents/${t.docId}`) },
  "rest.original": { on: (t) => get(`/v1/documents/${t.docId}/original`) },
  metrics: { on: () => get("/metrics") },
  // Streamable HTTP wants both answer forms accepted; stateless, so a tool call needs no session.
  mcp: {
    on: () => ({
      ...post("/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_knowledge_bases", arguments: {} } }),
      headers: { Accept: "application/json, text/event-stream" },
    }),
  },
};

const routes = httpRoutes({ limits: { maxUploadBytes: 1024, inlineMaxBytes: 1024 }, blobs: new DirBlobStore("/nowhere"), logger: silentLogger });
const guarded = routes.filter((r): r is GuardedRoute => !isOpen(r));

let world: HttpWorld;
beforeAll(async () => {
  world = await startHttpWorld();
}, 180_000);
afterAll(async () => world?.stop());

async function send(probe: Probe, key: string | undefined) {
  const headers: Record<string, string> = { ...probe.headers, ...(key === undefined ? {} : { Authorization: key }) };
  let body: BodyInit | undefined;
  if (probe.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(probe.json);
  } else if (probe.form) body = probe.form();
  const res = await fetch(`${world.url}${probe.path}`, { method: probe.method, headers, body });
  return { status: res.status, text: await res.text() };
}

/** Dify's API answers a refused key with 403 and its own codes (gateway/http/dify/dify-shapes.ts). */
const refusedStatus = (route: GuardedRoute) => (route.name.startsWith("dify.") ? 403 : 401);

describe("the plain-HTTP routes' door", () => {
  it("has a probe for every guarded route, and serves only the console without a key", () => {
    expect(guarded.map((r) => r.name).sort()).toEqual(Object.keys(PROBES).sort());
    expect(routes.filter(isOpen).map((r) => r.name)).toEqual(["console"]);
  });

  for (const route of guarded) {
    it(`${route.name}: refuses a missing key and a wrong key with the authenticator's reason`, async () => {
      const probe = PROBES[route.name].on(world.a);
      const missing = await send(probe, undefined);
      expect(missing.status, missing.text).toBe(refusedStatus(route));
      expect(missing.text).toMatch(/needs an API key/);
      const wrongKey = `qk_${"0".repeat(16)}_${randomBytes(32).toString("base64url")}`;
      for (const wrong of [`Bearer ${wrongKey}`, `Bearer ${world.keys.reader}x`]) {
        const refused = await send(probe, wrong);
        expect(refused.status, refused.text).toBe(refusedStatus(route));
        expect(refused.text).toMatch(/not valid/);
      }
      const malformed = await send(probe, `Basic ${world.keys.reader}`);
      expect(malformed.status, malformed.text).toBe(refusedStatus(route));
      expect(malformed.text).toMatch(/must be `Bearer <key>`/);
    });

    it(`${route.name}: takes the right key, and refuses a key below its ${route.role} role`, async () => {
      const right = await send(PROBES[route.name].on(world.a), `Bearer ${world.keys[route.role]}`);
      expect(right.status, right.text).toBe(200);
      const below = { reader: undefined, editor: "reader", admin: "editor" }[route.role];
      if (below) {
        const low = await send(PROBES[route.name].on(world.a), `Bearer ${world.keys[below]}`);
        expect(low.status, low.text).toBe(403);
        expect(low.text).toContain(`has the ${below} role`);
      }
    });

    it(`${route.name}: keeps a key limited to tenant A out of tenant B (${route.scope.kind})`, async () => {
      // An admin key cannot be limited to knowledge bases, so an admin route meets only unscoped keys.
      const key = `Bearer ${world.keys[route.role === "admin" ? "admin" : `tenant-a-${route.role}`]}`;
      const own = await send(PROBES[route.name].on(world.a), key);
      expect(own.status, own.text).toBe(200);
      if (route.scope.kind === "check") {
        const other = await send(PROBES[route.name].on(world.b), key);
        // Out of scope answers as missing would (gateway/access/scope.ts), so tenant B's names stay hidden.
        expect(other.status, other.text).toBe(404);
        expect(other.text).toMatch(/in the knowledge bases the API key \\?"tenant-a-(reader|editor)\\?" may reach/);
      } else if (route.scope.kind === "per-call") {
        expect(own.text).toContain(world.a.name);
        expect(own.text).not.toContain(world.b.name);
        expect(own.text).not.toContain(world.b.assistant);
      } else {
        // A route that touches no knowledge base says why, and a scoped key is served like any other.
        expect(route.scope.why).toMatch(/no knowledge base/);
        if (route.name === "metrics") expect(own.text).toMatch(/^quarry_rpc_server_duration_seconds_count\{/m);
      }
    });
  }
});
