// Quarry's MCP server through the official SDK's client, over both transports, against a real
// embedded Quarry with API keys: stdio (`quarry mcp` as a child process, started the way
// docs/INTEGRATIONS.md's configuration starts it) and streamable HTTP (the gateway's /mcp,
// with the documented URL and header). Each transport lists the tools and calls each one with a
// reader key scoped to two bases, `ask` must equal the Connect Chat's answer for the same question
// and settings, and everything that names a third base is refused with the gateway's own message.
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { MCP_TOOLS, kbUri } from "../../gateway/mcp/server.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { collectChat, lastUpdate, watchAll } from "./e2e-helpers.ts";

const ROOT = process.cwd();
const ADMIN_KEY = "mcp-test-admin-key";
const text = (s: string) => new TextEncoder().encode(s);

const MANUAL = [
  "# Lighthouse keeping",
  "The lamp of the Ardnamurchan lighthouse is lit thirty minutes before sunset and put out at sunrise.",
  "Keepers wind the clockwork that turns the lens every four hours during the night.",
  "## Fog",
  "In fog the keeper sounds the horn twice every ninety seconds until the far buoy is visible again.",
  "The fog log records the start, the end and the number of blasts of each fog.",
  "## Supplies",
  "Paraffin for the lamp arrives by boat on the first Monday of each month, weather permitting.",
].join("\n\n");
const SECRET = "The payroll of the lighthouse board is kept in the locked drawer of the harbour office.";

/** The two configuration snippets of docs/INTEGRATIONS.md, stdio first. */
async function documentedConfigs() {
  const doc = await readFile(resolve(ROOT, "docs/INTEGRATIONS.md"), "utf8");
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].filter((m) => m[1].includes('"mcpServers"')).map((m) => JSON.parse(m[1]).mcpServers.quarry);
  expect(blocks, "docs/INTEGRATIONS.md should hold the stdio and the HTTP configuration").toHaveLength(2);
  return { stdio: blocks[0] as { command: string; args: string[]; env: Record<string, string> }, http: blocks[1] as { type: string; url: string; headers: Record<string, string> } };
}

type Connect = (key: string | undefined) => Promise<Client>;

async function connected(transport: Transport): Promise<Client> {
  const client = new Client({ name: "quarry-mcp-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const structured = (result: unknown) => {
  const r = result as CallToolResult;
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  // The text block a model reads is the same JSON as the structured content.
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent as Record<string, any>;
};

const refusal = (result: unknown) => {
  const r = result as CallToolResult;
  expect(r.isError, `the call should have been refused: ${JSON.stringify(r.content)}`).toBe(true);
  return (r.content[0] as { text: string }).text;
};

describe("the MCP server over stdio and streamable HTTP", () => {
  let quarry: EmbeddedQuarryFixture;
  let admin: QuarryClient;
  let readerKey: string;
  let secretChunk: { documentId: string; chunkId: string; knowledgeBaseId: string };
  const transports: Record<"stdio" | "http", Connect> = {} as never;
  const open: Client[] = [];

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry({ env: { QUARRY_API_KEY: ADMIN_KEY } });
    admin = gatewayClient(quarry.url, ADMIN_KEY);
    await admin.createKnowledgeBase({ name: "manuals", chunking: { chunkSize: 40, chunkOverlap: 0 } });
    await admin.createKnowledgeBase({ name: "secrets" });
    await admin.createKnowledgeBase({ name: "empty" });
    const docs = await Promise.all([
      admin.uploadDocument({ header: { knowledgeBase: "manuals", fileName: "keeping.md", metadata: { lang: "en" } }, content: text(MANUAL) }),
      admin.uploadDocument({ header: { knowledgeBase: "secrets", fileName: "payroll.txt" }, content: text(SECRET) }),
    ]);
    const ids = docs.map((d) => d.document!.id);
    const log = await watchAll(admin, ids);
    for (const id of ids) expect(lastUpdate(log, id).status, lastUpdate(log, id).error).toBe(DocumentStatus.READY);
    const hit = (await admin.search({ query: "payroll drawer", knowledgeBases: ["secrets"] })).hits[0];
    secretChunk = { documentId: hit.chunk!.documentId, chunkId: hit.chunk!.id, knowledgeBaseId: hit.chunk!.knowledgeBaseId };
    ({ secret: readerKey } = await admin.createApiKey({ name: "assistant", role: ApiKeyRole.READER, knowledgeBases: ["manuals", "empty"] }));

    const configs = await documentedConfigs();
    transports.stdio = async (key) => {
      const { command, args, env } = configs.stdio;
      const client = await connected(
        new StdioClientTransport({
          command: command === "node" ? process.execPath : command,
          args: args.map((a) => a.replace("/path/to/quarry", ROOT).replace("http://localhost:8080", quarry.url)),
          env: { ...getDefaultEnvironment(), ...env, QUARRY_API_KEY: key ?? "" },
          stderr: "ignore",
        }),
      );
      open.push(client);
      return client;
    };
    transports.http = async (key) => {
      const { url, headers } = configs.http;
      expect(configs.http.type).toBe("http");
      const withKey = key ? { ...headers, Authorization: headers.Authorization.replace("qk_your_key", key) } : {};
      const client = await connected(new StreamableHTTPClientTransport(new URL(url.replace("http://localhost:8080", quarry.url)), { requestInit: { headers: withKey } }));
      open.push(client);
      return client;
    };
  }, 180_000);

  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await quarry?.stop();
  });

  describe.each(["stdio", "http"] as const)("over %s", (name) => {
    let mcp: Client;
    beforeAll(async () => {
      mcp = await transports[name](readerKey);
    }, 60_000);

    it("lists the four tools, each with its arguments' schema", async () => {
      const { tools } = await mcp.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());
      const search = tools.find((t) => t.name === "search")!;
      expect(search.inputSchema.required).toEqual(expect.arrayContaining(["query", "knowledge_bases"]));
      expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["mode", "top_k", "filters"]));
    });

    it("list_knowledge_bases shows only the key's bases", async () => {
      const result = structured(await mcp.callTool({ name: "list_knowledge_bases", arguments: {} }));
      expect(result.knowledge_bases.map((k: { name: string }) => k.name).sort()).toEqual(["empty", "manuals"]);
      expect(result.knowledge_bases.find((k: { name: string }) => k.name === "manuals").document_count).toBe(1);
    });

    it("search returns hits with what a citation needs, honouring mode, top-k and filters", async () => {
      const result = structured(await mcp.callTool({ name: "search", arguments: { query: "fog horn", knowledge_bases: ["manuals"], mode: "bm25", top_k: 2 } }));
      expect(result.hits.length).toBeGreaterThan(0);
      expect(result.hits.length).toBeLessThanOrEqual(2);
      const top = result.hits[0];
      expect(top).toMatchObject({ rank: 1, file_name: "keeping.md", section_path: expect.arrayContaining(["Fog"]) });
      expect(top.text).toContain("horn");
      expect(top.chunk_id).toBeTruthy();
      expect(top.document_id).toBeTruthy();
      // BM25 alone: no hit has a place in the vector list.
      for (const hit of result.hits) expect(hit.explain.vector_rank).toBe(0);
      const other = structured(await mcp.callTool({ name: "search", arguments: { query: "fog horn", knowledge_bases: ["manuals"], filters: { lang: "fr" } } }));
      expect(other.hits).toEqual([]);
    });

    it("ask answers with the Connect Chat's text and citations for the same question and settings", async () => {
      const question = "How often does the keeper sound the horn in fog?";
      const viaMcp = structured(await mcp.callTool({ name: "ask", arguments: { question, knowledge_bases: ["manuals"], mode: "hybrid", top_k: 4 } }));
      const viaChat = await collectChat(gatewayClient(quarry.url, readerKey), { question, knowledgeBases: ["manuals"], settings: { mode: RetrievalMode.HYBRID, topK: 4 } });
      expect(viaMcp.answer).toBe(viaChat.text);
      expect(viaMcp.answer).toContain("ninety seconds");
      expect(viaMcp.answered).toBe(true);
      expect(viaMcp.citations.length).toBeGreaterThan(0);
      // Field by field: marker, chunk, document, file, pages, section, snippet, score.
      const mcpSide = viaMcp.citations.map((c: Record<string, unknown>) => [c.marker, c.chunk_id, c.document_id, c.file_name, c.page, c.page_end, c.section_path, c.snippet, c.score]);
      const chatSide = viaChat.citations.map((c) => [c.marker, c.chunkId, c.documentId, c.fileName, c.page, c.pageEnd, c.sectionPath, c.snippet, c.score]);
      expect(mcpSide).toEqual(chatSide);
      const checks = viaChat.final.citationChecks;
      for (const c of viaMcp.citations) {
        const own = checks.filter((check) => check.marker === c.marker);
        expect(c.supported).toBe(own.length ? own.every((check) => check.supported) : null);
      }
      expect(viaMcp.turn_id).toMatch(/\S/);
    });

    it("ask abstains when the bases hold nothing that answers", async () => {
      const result = structured(await mcp.callTool({ name: "ask", arguments: { question: "How often does the keeper sound the horn in fog?", knowledge_bases: ["empty"] } }));
      expect(result.answered).toBe(false);
      expect(result.answered_reason).not.toBe("");
      expect(result.citations).toEqual([]);
      // Quarry's own words, whichever answerer would have run.
      expect(result.answer).toMatch(/do not answer this question|(no passage|nothing) in the selected knowledge bases matches/);
    });

    it("get_chunk returns a chunk with its neighbours in document order", async () => {
      const { hits } = structured(await mcp.callTool({ name: "search", arguments: { query: "fog log blasts", knowledge_bases: ["manuals"], mode: "bm25", top_k: 1 } }));
      const result = structured(await mcp.callTool({ name: "get_chunk", arguments: { document_id: hits[0].document_id, chunk_id: hits[0].chunk_id, neighbours: 1 } }));
      expect(result.chunk.chunk_id).toBe(hits[0].chunk_id);
      expect(result.chunk.text).toBe(hits[0].text);
      expect(result.before.length + result.after.length).toBeGreaterThan(0);
      for (const c of result.before) expect(c.index).toBe(result.chunk.index - 1);
      for (const c of result.after) expect(c.index).toBe(result.chunk.index + 1);
    });

    it("lists and reads the key's knowledge bases as resources", async () => {
      const { resources } = await mcp.listResources();
      const { knowledgeBases } = await admin.listKnowledgeBases({});
      const idOf = (name: string) => knowledgeBases.find((k) => k.name === name)!.id;
      expect(resources.map((r) => [r.name, r.uri]).sort()).toEqual([
        ["empty", kbUri(idOf("empty"))],
        ["manuals", kbUri(idOf("manuals"))],
      ]);
      // Listed by id; a name reads the same base.
      for (const uri of [kbUri(idOf("manuals")), kbUri("manuals")]) {
        const { contents } = await mcp.readResource({ uri });
        const body = JSON.parse((contents[0] as { text: string }).text);
        expect(body).toMatchObject({ id: idOf("manuals"), name: "manuals", documents: [{ file_name: "keeping.md", status: "ready" }] });
      }
    });

    it("refuses the scoped reader key everything that names another base, with the gateway's message", async () => {
      // Out of scope reads as missing (gateway/access/scope.ts): a scoped key learns nothing of other bases.
      const denied = /not_found.*in the knowledge bases the API key "assistant" may reach/;
      expect(refusal(await mcp.callTool({ name: "search", arguments: { query: "payroll", knowledge_bases: ["secrets"] } }))).toMatch(denied);
      expect(refusal(await mcp.callTool({ name: "search", arguments: { query: "payroll", knowledge_bases: ["manuals", "secrets"] } }))).toMatch(denied);
      expect(refusal(await mcp.callTool({ name: "ask", arguments: { question: "Where is the payroll kept?", knowledge_bases: ["secrets"] } }))).toMatch(denied);
      expect(refusal(await mcp.callTool({ name: "get_chunk", arguments: { document_id: secretChunk.documentId, chunk_id: secretChunk.chunkId } }))).toMatch(denied);
      await expect(mcp.readResource({ uri: kbUri("secrets") })).rejects.toThrow(denied);
      await expect(mcp.readResource({ uri: kbUri(secretChunk.knowledgeBaseId) })).rejects.toThrow(denied);
    });

    it("rejects bad arguments with a message naming the argument", async () => {
      const message = refusal(await mcp.callTool({ name: "search", arguments: { query: "fog", knowledge_bases: ["manuals"], mode: "fuzzy" } }));
      expect(message).toMatch(/mode/);
    });

    it("an admin key sees every base; no key is refused as unauthenticated", async () => {
      const adminMcp = await transports[name](ADMIN_KEY);
      const all = structured(await adminMcp.callTool({ name: "list_knowledge_bases", arguments: {} }));
      expect(all.knowledge_bases.map((k: { name: string }) => k.name).sort()).toEqual(["empty", "manuals", "secrets"]);
      if (name === "http") {
        // The gateway's door refuses the keyless request (401) before MCP reads it: not even initialize passes.
        await expect(transports[name](undefined)).rejects.toThrow(/needs an API key/);
      } else {
        const anonymous = await transports[name](undefined);
        expect(refusal(await anonymous.callTool({ name: "list_knowledge_bases", arguments: {} }))).toMatch(/unauthenticated.*needs an API key/);
      }
    }, 60_000);
  });

  it("GET /mcp is 405: the stateless server has no stream to offer", async () => {
    const res = await fetch(`${quarry.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

/** A JSON-RPC tools/call POSTed to /mcp naming `host`, as a browser page on a rebound domain would. */
function callToolAddressedTo(url: string, host: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_knowledge_bases", arguments: {} } });
  return new Promise((resolvePost, reject) => {
    const req = request(`${url}/mcp`, { method: "POST", headers: { host, "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
      let text = "";
      res.on("data", (piece) => (text += piece));
      res.on("end", () => resolvePost({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("the MCP server on a Quarry without keys, and without a gateway", () => {
  let quarry: EmbeddedQuarryFixture;
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: "open" });
  }, 120_000);
  afterAll(async () => quarry?.stop());

  it("answers calls addressed to localhost only, as the Connect API does", async () => {
    const local = await callToolAddressedTo(quarry.url, `localhost:${new URL(quarry.url).port}`);
    expect(local.status).toBe(200);
    expect(JSON.parse(local.body).result.structuredContent.knowledge_bases.map((k: { name: string }) => k.name)).toEqual(["open"]);
    // The slot's door refuses it before MCP reads it, with the JSON-RPC error MCP clients expect.
    const rebound = await callToolAddressedTo(quarry.url, "attacker.example");
    expect(rebound.status).toBe(401);
    expect(JSON.parse(rebound.body).error.message).toMatch(/only requests addressed to localhost, not to attacker\.example/);
  });

  it("`quarry mcp` with nothing listening at --url: the tool's error says so and what to do", async () => {
    const port = await new Promise<number>((resolvePort) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolvePort(port));
      });
    });
    const mcp = await connected(
      new StdioClientTransport({ command: process.execPath, args: [resolve(ROOT, "bin/quarry.mjs"), "mcp", "--url", `http://127.0.0.1:${port}`], env: getDefaultEnvironment(), stderr: "ignore" }),
    );
    try {
      expect(refusal(await mcp.callTool({ name: "list_knowledge_bases", arguments: {} }))).toMatch(/no Quarry gateway is listening at http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await mcp.close();
    }
  }, 60_000);
});
