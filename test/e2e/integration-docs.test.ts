// The snippets of docs/INTEGRATIONS.md (its "Plain HTTP (curl)" section included), run as written
// against a Quarry holding the knowledge base `handbook` they name: every fenced js, python or sh
// block preceded by `<!-- expect: TEXT -->` runs (js with node beside this repository's
// node_modules, python in a venv with Python's `openai` from PyPI, sh with bash and curl), with
// QUARRY_URL and QUARRY_API_KEY set, and must exit 0 printing TEXT. "the answer" stands for the
// Connect Chat's answer to the same question, so the OpenAI clients are shown to print exactly it.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../../client/gateway-client.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { collectChat } from "./e2e-helpers.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { pythonWithOpenAi } from "../support/python-openai.ts";
import { TENANT_TEXT } from "../support/http-world.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Snippet {
  where: string;
  lang: "js" | "python" | "sh";
  code: string;
  expect: string;
}

/** The runnable snippets of a markdown text (only within `section` when given). */
function snippets(file: string, markdown: string, section?: string): Snippet[] {
  let text = markdown;
  if (section) {
    const start = markdown.indexOf(`\n## ${section}\n`);
    expect(start, `${file} has no "## ${section}" section`).toBeGreaterThanOrEqual(0);
    const end = markdown.indexOf("\n## ", start + 4);
    text = markdown.slice(start, end < 0 ? undefined : end);
  }
  const found: Snippet[] = [];
  for (const m of text.matchAll(/<!-- expect: (.+?) -->\n```(js|python|sh)\n([\s\S]*?)\n```/g)) {
    found.push({ where: `${file}: ${m[3].split("\n")[0].slice(0, 60)}`, expect: m[1], lang: m[2] as Snippet["lang"], code: m[3] });
  }
  return found;
}

const integrations = snippets("docs/INTEGRATIONS.md", await readFile(join(ROOT, "docs/INTEGRATIONS.md"), "utf8"));
const QUESTION = "When are expense reports due?";

let quarry: EmbeddedQuarryFixture;
let env: NodeJS.ProcessEnv;
let answer: string;
let work: string;
let python: { python: string } | { missing: string };

beforeAll(async () => {
  const bootstrap = `bootstrap-${randomBytes(16).toString("hex")}`;
  quarry = await startEmbeddedQuarry({ env: { QUARRY_API_KEY: bootstrap } });
  const admin = gatewayClient(quarry.url, bootstrap);
  const kb = (await admin.createKnowledgeBase({ name: "handbook" })).knowledgeBase!;
  const doc = (await admin.uploadDocument({ header: { knowledgeBase: kb.id, fileName: "handbook.txt" }, content: new TextEncoder().encode(TENANT_TEXT("company")) })).document!;
  for await (const _ of admin.watchIngestion({ documentIds: [doc.id] }, { signal: AbortSignal.timeout(120_000) }));
  // An editor: the plain-HTTP upload needs one, and an editor may do what a reader does.
  const key = (await admin.createApiKey({ name: "docs", role: ApiKeyRole.EDITOR, knowledgeBases: ["handbook"] })).secret;
  answer = (await collectChat(gatewayClient(quarry.url, key), { question: QUESTION, knowledgeBases: ["handbook"] })).text;
  env = { PATH: process.env.PATH, HOME: process.env.HOME, QUARRY_URL: quarry.url, QUARRY_API_KEY: key };
  work = join(ROOT, "node_modules/.cache/quarry-doc-snippets");
  await mkdir(work, { recursive: true });
  work = await mkdtemp(join(work, "run-"));
  python = await pythonWithOpenAi();
  if ("missing" in python) console.warn(`\n*** SKIPPED: ${python.missing}, so the Python snippets of docs/INTEGRATIONS.md did not run. Install python3 (with venv) to run them. ***\n`);
}, 600_000);
afterAll(async () => {
  await quarry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function runSnippet(snippet: Snippet, i: number): Promise<string> {
  const file = join(work, `snippet-${i}.${snippet.lang === "js" ? "mjs" : snippet.lang === "python" ? "py" : "sh"}`);
  await writeFile(file, snippet.code);
  const options = { env, cwd: work, timeout: 120_000 };
  if (snippet.lang === "js") return (await run(process.execPath, [file], options)).stdout;
  if (snippet.lang === "sh") return (await run("bash", ["-euo", "pipefail", file], options)).stdout;
  return (await run((python as { python: string }).python, [file], options)).stdout;
}

describe("the integration snippets, run as documented", () => {
  it("finds every kind of snippet the docs promise", () => {
    expect(integrations.map((s) => s.lang).sort()).toEqual(["js", "js", "python", "python", "sh", "sh", "sh", "sh", "sh", "sh"]);
  });

  for (const [i, snippet] of integrations.entries()) {
    it(`#${i} ${snippet.lang}: ${snippet.where}`, async (context) => {
      if (snippet.lang === "python" && "missing" in python) return context.skip();
      const stdout = await runSnippet(snippet, i);
      expect(stdout, stdout).toContain(snippet.expect === "the answer" ? answer : snippet.expect);
    });
  }

  it("python: raises OpenAI's own errors and embeds, as the JS client does", async (context) => {
    if ("missing" in python) return context.skip();
    const script = [
      "import os, openai",
      "from openai import OpenAI",
      'client = OpenAI(base_url=os.environ["QUARRY_URL"] + "/v1", api_key=os.environ["QUARRY_API_KEY"], max_retries=0)',
      "try:",
      '    client.chat.completions.create(model="no-such-assistant", messages=[{"role": "user", "content": "q"}])',
      // The snippets' key is limited to handbook: a model it may not use and one that does not exist look alike.
      "except openai.NotFoundError as e:",
      '    print("not found:", e.status_code)',
      "try:",
      '    OpenAI(base_url=os.environ["QUARRY_URL"] + "/v1", api_key="qk_wrong", max_retries=0).models.list()',
      "except openai.AuthenticationError as e:",
      '    print("unauthenticated:", e.status_code)',
      'print("dimension:", len(client.embeddings.create(model="", input=["expense reports"]).data[0].embedding))',
    ].join("\n");
    const stdout = await runSnippet({ where: "errors", lang: "python", code: script, expect: "" }, 99);
    expect(stdout).toBe("not found: 404\nunauthenticated: 401\ndimension: 384\n");
  });
});
