// Quarry as an MCP server (the official SDK): four tools and the knowledge bases as resources, each
// one a call of Quarry's public API through the client it is given. That client carries the MCP
// caller's API key to the gateway, so the gateway's access interceptor decides every call as it
// does for any other client: a reader key sees only its bases, and a refusal comes back as the
// tool's error with the gateway's own message. The same definition serves stdio (`quarry mcp`,
// over the network) and streamable HTTP (`/mcp`, through the gateway's router in memory).
import type { Client } from "@connectrpc/connect";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { collectChatAnswer } from "./chat-answer.ts";
import { chunkResult, documentResult, hitResult, knowledgeBaseResult, MODES, type ModeName } from "./results.ts";

export type McpQuarryApi = Pick<Client<typeof QuarryService>, "listKnowledgeBases" | "getKnowledgeBase" | "listDocuments" | "search" | "chat" | "getChunkNeighbours">;

export const MCP_TOOLS = ["list_knowledge_bases", "search", "ask", "get_chunk"] as const;
// By id or name, as the API takes them; listings use the id, which needs no escaping.
const KB_URI = "quarry://knowledge-bases/{knowledge_base}";

const retrievalArgs = {
  knowledge_bases: z.array(z.string().min(1)).min(1).describe("knowledge bases to search, by name or id (list_knowledge_bases)"),
  mode: z.enum(Object.keys(MODES) as [ModeName, ...ModeName[]]).optional().describe("hybrid (default): keyword and vector fused; bm25: keyword; vector: embedding similarity"),
  top_k: z.number().int().min(1).optional().describe("how many chunks to retrieve (default 10 for search, 8 for ask)"),
  filters: z.record(z.string(), z.string()).optional().describe("only documents whose metadata has every one of these key/value pairs"),
  document_ids: z.array(z.string().min(1)).optional().describe("only these documents"),
};

type RetrievalArgs = { mode?: ModeName; top_k?: number; filters?: Record<string, string>; document_ids?: string[] };
const settingsOf = (a: RetrievalArgs) => ({ mode: MODES[a.mode ?? "hybrid"], topK: a.top_k ?? 0, metadataEquals: a.filters ?? {}, documentIds: a.document_ids ?? [] });

/** The JSON both as text (what every MCP client shows a model) and as structured content. */
function json(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

export function createQuarryMcpServer(api: McpQuarryApi, version: string): McpServer {
  const server = new McpServer({ name: "quarry", title: "Quarry", version }, { capabilities: { tools: {}, resources: {} } });
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool(
    "list_knowledge_bases",
    { title: "List knowledge bases", description: "The knowledge bases this API key may read, with their document and chunk counts.", annotations: readOnly },
    async ({ signal }) => {
      const { knowledgeBases } = await api.listKnowledgeBases({}, { signal });
      return json({ knowledge_bases: knowledgeBases.map(knowledgeBaseResult) });
    },
  );

  server.registerTool(
    "search",
    {
      title: "Search",
      description: "Retrieve the chunks that best match a query, each with where it comes from (file, page, section) to cite it, and its ranks.",
      inputSchema: { query: z.string().min(1).describe("what to look for"), ...retrievalArgs },
      annotations: readOnly,
    },
    async (args, { signal }) => {
      const res = await api.search({ query: args.query, knowledgeBases: args.knowledge_bases, settings: settingsOf(args) }, { signal });
      return json({ hits: res.hits.map((hit, i) => hitResult(hit, i + 1)), took_ms: res.tookMs, ...(res.notes?.degraded ? { degraded: res.notes.degraded } : {}) });
    },
  );

  server.registerTool(
    "ask",
    {
      title: "Ask",
      description:
        "Answer a question from the knowledge bases, with numbered citations ([n]) to the chunks it used and whether each is supported. " +
        "answered is false when the bases do not answer the question: do not answer it from elsewhere in Quarry's name.",
      inputSchema: { question: z.string().min(1), ...retrievalArgs, conversation_id: z.string().optional().describe("continue this conversation (a follow-up)") },
      // Not read-only: every answer is stored as a conversation's turn (its provenance).
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, { signal }) => {
      const events = api.chat({ question: args.question, knowledgeBases: args.knowledge_bases, settings: settingsOf(args), conversationId: args.conversation_id ?? "" }, { signal });
      return json({ ...(await collectChatAnswer(events)) });
    },
  );

  server.registerTool(
    "get_chunk",
    {
      title: "Get a chunk",
      description: "A chunk (as a search hit or citation names it) with the chunks around it in its document, to read a citation in context.",
      inputSchema: {
        document_id: z.string().min(1),
        chunk_id: z.string().min(1),
        neighbours: z.number().int().min(0).max(5).optional().describe("chunks on each side (default 1)"),
      },
      annotations: readOnly,
    },
    async (args, { signal }) => {
      const res = await api.getChunkNeighbours({ documentId: args.document_id, chunkId: args.chunk_id, neighbours: args.neighbours ?? 0 }, { signal });
      return json({ chunk: chunkResult(res.chunk!), before: res.before.map(chunkResult), after: res.after.map(chunkResult) });
    },
  );

  server.registerResource(
    "knowledge-base",
    new ResourceTemplate(KB_URI, {
      list: async ({ signal }) => {
        const { knowledgeBases } = await api.listKnowledgeBases({}, { signal });
        return {
          resources: knowledgeBases.map((k) => ({ uri: kbUri(k.id), name: k.name, description: k.description || undefined, mimeType: "application/json" })),
        };
      },
    }),
    { title: "Knowledge base", description: "A knowledge base: its settings, counts and documents.", mimeType: "application/json" },
    async (uri, variables, { signal }) => {
      const knowledgeBase = decodeURIComponent(String(variables.knowledge_base));
      const [{ knowledgeBase: k }, { documents }] = await Promise.all([
        api.getKnowledgeBase({ knowledgeBase }, { signal }),
        api.listDocuments({ knowledgeBase }, { signal }),
      ]);
      const body = { ...knowledgeBaseResult(k!), documents: documents.map(documentResult) };
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
    },
  );
  return server;
}

/** The template's variable stops at "/" and ",", so both are escaped. */
export const kbUri = (knowledgeBase: string) => KB_URI.replace("{knowledge_base}", encodeURIComponent(knowledgeBase).replace(/,/g, "%2C"));
