// `quarry doc list|show|delete` and `quarry chunk edit|disable|enable|add` as a person runs them:
// child processes of the real CLI against an embedded Quarry, checking what they print, how they
// exit, and that what they did is what the API then shows and search then finds.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");

function quarryCli(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [BIN, ...args], { timeout: 60_000, env: { ...process.env, QUARRY_API_KEY: "" } }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.end(input ?? "");
  });
}

const MANUAL = "# Valves\n\nThe intake valve is checked weekly and greased monthly.\n\n# Pumps\n\nThe bilge pump runs for ten minutes after every storm.\n";

describe("quarry doc and quarry chunk against an embedded instance", () => {
  let quarry: EmbeddedQuarryFixture;
  let docId = "";
  const cli = (...args: string[]) => quarryCli([...args, "--url", quarry.url]);
  const keyword = async (query: string) => (await quarry.client.search({ query, knowledgeBases: ["cli-docs"], settings: { mode: RetrievalMode.BM25 } })).hits.map((h) => h.chunk!.text);

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: "cli-docs", chunking: { chunkSize: 40, chunkOverlap: 0 } });
    docId = (await upload(quarry.client, "cli-docs", "maintenance.md", new TextEncoder().encode(MANUAL))).document!.id;
    expect(lastUpdate(await watchAll(quarry.client, [docId]), docId).status).toBe(DocumentStatus.READY);
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
  });

  it("doc list shows each document's id, status, chunks and file under a header", async () => {
    const run = await cli("doc", "list", "--kb", "cli-docs");
    expect(run.code, run.stderr).toBe(0);
    const [header, row] = run.stdout.trimEnd().split("\n");
    expect(header.split(/\s{2,}/)).toEqual(["ID", "STATUS", "CHUNKS", "ENABLED", "FILE"]);
    expect(row.split(/\s{2,}/)).toEqual([docId, "ready", "2 chunks", "yes", "maintenance.md"]);
  });

  it("doc show opens a document by its file name: each chunk with its id, section and text; --query searches within", async () => {
    const run = await cli("doc", "show", "maintenance.md", "--kb", "cli-docs");
    expect(run.code, run.stderr).toBe(0);
    const { chunks } = await quarry.client.listDocumentChunks({ documentId: docId });
    expect(run.stdout).toContain(`maintenance.md (${docId}) — ready, 2 chunks\n`);
    expect(run.stdout).toContain(`#${chunks[0].index + 1}  ${chunks[0].id}  Valves\n    # Valves\n    \n    The intake valve`);
    expect(run.stdout).toContain(`#${chunks[1].index + 1}  ${chunks[1].id}  Pumps\n`);
    const within = await cli("doc", "show", docId, "--query", "BILGE pump");
    expect(within.stdout).toContain("2 chunks; \"BILGE pump\" is in 1 chunk");
    expect(within.stdout).not.toContain("intake valve");
    expect(within.stdout).toContain("bilge pump runs");
  });

  it("chunk edit replaces a chunk's text by an id prefix (argument or standard input), and search finds the new text at once", async () => {
    const { chunks } = await quarry.client.listDocumentChunks({ documentId: docId });
    const pumps = chunks.find((c) => c.text.includes("bilge"))!;
    const run = await cli("chunk", "edit", docId, pumps.id.slice(0, 8), "The bilge pump runs for twenty minutes after every gale.");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`edited #${pumps.index + 1}  ${pumps.id}  Pumps  edited v2\n`);
    expect(await keyword("twenty minutes gale")).toEqual(["The bilge pump runs for twenty minutes after every gale."]);

    const piped = await quarryCli(["chunk", "edit", "maintenance.md", pumps.id, "--kb", "cli-docs", "--expect-version", "2", "--url", quarry.url], "The bilge pump runs for thirty minutes after every gale.\n");
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain("edited v3");
    const stale = await cli("chunk", "edit", docId, pumps.id, "lost update", "--expect-version", "2");
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/version 3, not 2/);
  });

  it("chunk disable keeps a chunk out of search and enable brings it back; an unknown chunk is one line and exit 1", async () => {
    const { chunks } = await quarry.client.listDocumentChunks({ documentId: docId });
    const valves = chunks.find((c) => c.text.includes("intake valve"))!;
    const off = await cli("chunk", "disable", docId, valves.id);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toBe(`disabled #${valves.index + 1}  ${valves.id}  Valves  disabled\n`);
    expect(await keyword("intake valve")).toEqual([]);
    expect((await cli("doc", "show", docId)).stdout).toContain(`${valves.id}  Valves  disabled`);
    expect((await cli("chunk", "enable", docId, valves.id)).code).toBe(0);
    expect(await keyword("intake valve")).toHaveLength(1);
    const unknown = await cli("chunk", "disable", docId, "ffffffffffff");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
    expect(unknown.stderr).toMatch(/maintenance\.md has no chunk ffffffffffff/);
  });

  it("chunk add writes a manual chunk under a section; doc delete removes the document", async () => {
    const run = await cli("chunk", "add", docId, "The sea cock is closed before every haul-out.", "--section", "Maintenance > Hull", "--page", "3");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^added #\d+  [0-9a-f]{32}  Maintenance > Hull  p\. 3  manual\n$/);
    expect(await keyword("sea cock haul-out")).toEqual(["The sea cock is closed before every haul-out."]);
    const empty = await cli("chunk", "add", docId, "   ");
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/cannot be empty/);

    const deleted = await cli("doc", "delete", docId);
    expect(deleted.stdout).toBe(`deleted maintenance.md (${docId})\n`);
    expect((await cli("doc", "list", "--kb", "cli-docs")).stdout).toMatch(/has no documents yet/);
    expect(await keyword("sea cock")).toEqual([]);
  });
});
