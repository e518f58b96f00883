// The README's walkthrough, run as a newcomer runs it: every `sh` block of its "A walkthrough"
// section, in order and verbatim, by bash from a folder beside the clone's examples/, against an
// embedded Quarry started as `npm start` starts it (on a free port instead of 8080, which
// QUARRY_URL names, as the README says client commands read it). A command that exits non-zero
// fails the block; a few outputs are checked too, so the README's claims next to a command (it
// answers, it abstains, the edit is what the next answer says) stay true.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SECTION = "A walkthrough";

/** The `sh` blocks of the README's walkthrough section, in order. */
function walkthroughBlocks(markdown: string): string[] {
  const start = markdown.indexOf(`\n## ${SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${SECTION}" section`);
  const end = markdown.indexOf("\n## ", start + 4);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]);
}

const blocks = walkthroughBlocks(await readFile(join(ROOT, "README.md"), "utf8"));

/** What a block's output must show, by the first command it runs. */
const CLAIMS: Record<string, (output: string) => void> = {
  "npx quarry ingest examples/handbook --kb handbook": (out) => {
    expect(out).toMatch(/4 ready, 0 failed/);
    expect(out).toContain("due within 30 days");
    expect(out).toContain("do not answer this question");
  },
  "npx quarry ingest examples/handbook-zh --kb 手册": (out) => {
    expect(out).toMatch(/2 ready, 0 failed/);
    expect(out).toContain("十五天");
  },
  "npx quarry doc list --kb handbook": (out) => {
    expect(out).toContain("edited");
    expect(out).toContain("due within 60 days");
  },
};

let quarry: EmbeddedQuarryFixture;
let work: string;

beforeAll(async () => {
  quarry = await startEmbeddedQuarry();
  // Inside the clone, so `npx quarry` finds this package's own command, as it does from the clone.
  const runs = join(ROOT, "node_modules/.cache/quarry-readme");
  await mkdir(runs, { recursive: true });
  work = await mkdtemp(join(runs, "run-"));
  await symlink(join(ROOT, "examples"), join(work, "examples"));
}, 120_000);

afterAll(async () => {
  await quarry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the README's walkthrough, run verbatim", () => {
  it("has the blocks the README shows, each with commands", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const block of blocks) expect(block).toMatch(/^npx quarry /m);
  });

  for (const [i, block] of blocks.entries()) {
    const first = block.split("\n")[0].replace(/\s+#.*$/, "").trim();
    it(`block ${i + 1}: ${first}`, async () => {
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, QUARRY_URL: quarry.url, QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR };
      let output: string;
      try {
        const { stdout, stderr } = await run("bash", ["--norc", "-euo", "pipefail", "-c", block], { cwd: work, env, timeout: 600_000, maxBuffer: 16 << 20 });
        output = stdout + stderr;
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string };
        throw new Error(`README walkthrough block ${i + 1} exited ${e.code}:\n${block}\n--- stdout\n${e.stdout}\n--- stderr\n${e.stderr}`);
      }
      CLAIMS[first]?.(output);
    }, 900_000);
  }

  it("checked every block a claim names", () => {
    const firsts = blocks.map((b) => b.split("\n")[0].replace(/\s+#.*$/, "").trim());
    for (const claimed of Object.keys(CLAIMS)) expect(firsts, `README no longer starts a block with: ${claimed}`).toContain(claimed);
  });
});
