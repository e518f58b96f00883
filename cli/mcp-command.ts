// `quarry mcp`: Quarry as an MCP server on stdin/stdout, for MCP clients that start their servers
// as commands (Claude Desktop, IDEs). The tools call a running gateway through client/ with
// --api-key, so the gateway decides what the key may see; stdout carries only the protocol.
import type { Command, Option } from "commander";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { gatewayClient } from "../client/gateway-client.ts";
import { createQuarryMcpServer } from "../gateway/mcp/server.ts";

export function registerMcpCommand(program: Command, urlOption: () => Option, version: string): void {
  program
    .command("mcp")
    .description("serve MCP over stdio (tools: list_knowledge_bases, search, ask, get_chunk; knowledge bases as resources) for a running Quarry")
    .addOption(urlOption())
    .action(async (o: { url: string }) => {
      const server = createQuarryMcpServer(gatewayClient(o.url), version);
      const transport = new StdioServerTransport();
      // The client closing stdin is how a stdio MCP session ends.
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      process.stdin.once("end", () => void server.close());
      await server.connect(transport);
      process.stderr.write(`quarry mcp: serving ${o.url} over stdio\n`);
      await closed;
    });
}
