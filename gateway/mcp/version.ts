// The version the MCP server announces: Quarry's own, from package.json.
import { readFileSync } from "node:fs";

export const QUARRY_VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
