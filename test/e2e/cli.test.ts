// The real CLI, as a person runs it: `quarry ingest <folder>` then `quarry ask`, as child
// processes against an embedded Quarry, checking what they print and how they exit.
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { corpusPath } from "./e2e-helpers.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function quarryCli(args: string[]): Promise<Run> {
  return new Promise((resolveRun) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 150_000, maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolveRun({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The progress bar redraws with \r; keep only what ends up on each line. */
const lines = (text: string) => text.split("\n").map((l) => l.split("\r").at(-1)!.trim()).filter(Boolean);

describe("the quarry CLI against an embedded instance", () => {
  let quarry: EmbeddedQuarryFixture;
  let folder: string;
  // Named so the largest file sorts first: the next uploads then arrive while it embeds, as
  // happens with any real folder.
  const files = [
    ["a-rules-zh.md", "zh_procuratorate_admin_litigation_rules_2016.md"],
    ["b-ibm.md", "wiki.md"],
    ["c-customers.csv", "csv-comma.csv"],
    ["d-word-processors.pdf", "multi_page.pdf"],
  ];

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    // A scratch folder outside the repository, as a user's folder of documents would be.
    folder = await mkdtemp(join(tmpdir(), "quarry-cli-docs-"));
    for (const [name, source] of files) await copyFile(corpusPath(source), join(folder, name));
  });
  afterAll(async () => {
    await quarry?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("ingests a folder: creates the knowledge base, reports each file ready, exits 0", async () => {
    const run = await quarryCli(["ingest", folder, "--kb", "cli-kb", "--url", quarry.url]);
    const out = lines(run.stdout);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    // The Chinese rules file outweighs the English ones: the base gets the model that reads
    // Chinese, and the line says why.
    expect(out.some((l) => /^created knowledge base cli-kb with bge-small-zh-v1\.5; \d+% of the first files' words are Chinese$/.test(l)), run.stdout).toBe(true);
    for (const [name] of files) expect(out.some((l) => new RegExp(`^ready\\s+${name.replace(".", "\\.")} \\(\\d+ chunks\\)$`).test(l)), `${name} in:\n${run.stdout}`).toBe(true);
    expect(out.some((l) => new RegExp(`^${files.length} ready, 0 failed in [\\d.]+ s$`).test(l)), run.stdout).toBe(true);

    const { documents } = await quarry.client.listDocuments({ knowledgeBase: "cli-kb" });
    expect(documents.map((d) => d.fileName).sort()).toEqual(files.map(([name]) => name).sort());
    for (const d of documents) expect(d.status).toBe(DocumentStatus.READY);
  });

  it("says a second ingest of the same folder changed nothing", async () => {
    const run = await quarryCli(["ingest", folder, "--kb", "cli-kb", "--url", quarry.url]);
    expect(run.code, run.stderr).toBe(0);
    const out = lines(run.stdout);
    for (const [name] of files) expect(out).toContain(`unchanged  ${join(folder, name)}`);
    expect(out.some((l) => l.startsWith("created knowledge base"))).toBe(false);
  });

  it("asks: the answer streams, then the sources name the files", async () => {
    const run = await quarryCli(["ask", "Where is IBM headquartered?", "--kb", "cli-kb", "--url", quarry.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Armonk");
    const [answer, sources] = run.stdout.split("\nSources:\n");
    expect(sources, run.stdout).toBeDefined();
    const cited = [...sources.matchAll(/^ {2}\[(\d+)\] ([^,(]+?)[,( ]/gm)].map((m) => ({ marker: m[1], file: m[2] }));
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.map((c) => c.file)).toContain("b-ibm.md");
    for (const c of cited) {
      expect(files.map(([name]) => name)).toContain(c.file);
      expect(answer).toContain(`[${c.marker}]`);
    }
  });

  it("asks about the PDF and cites it with its page", async () => {
    const run = await quarryCli(["ask", "Who patented the typewriter in 1868?", "--kb", "cli-kb", "--url", quarry.url, "--mode", "bm25"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Sholes");
    // Page 1 holds the answer; the source line says so.
    expect(run.stdout).toMatch(/^ {2}\[\d+\] d-word-processors\.pdf, p\. 1\b/m);
  });

  it("exits non-zero with a readable message for a knowledge base that does not exist", async () => {
    const run = await quarryCli(["ask", "anything?", "--kb", "no-such-kb", "--url", quarry.url]);
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/no-such-kb/);
    expect(run.stderr + run.stdout).not.toMatch(/\n\s+at /);
  });
});
