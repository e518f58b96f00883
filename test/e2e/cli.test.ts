// The real CLI, as a person runs it: `quarry ingest <folder>` then `quarry ask`, as child
// processes against an embedded Quarry, checking what they print and how they exit.
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus, DocumentVectorMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { writeFixtures } from "../fixtures/fixture-documents.ts";
import { PDF_FACT } from "../fixtures/fixture-texts.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function quarryCli(args: string[], env?: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolveRun) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 150_000, maxBuffer: 10 * 1024 * 1024, env }, (error, stdout, stderr) => {
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
    ["a-clockmaker.txt", "long-prose.txt"],
    ["b-company.md", "company.md"],
    ["c-customers.csv", "customers.csv"],
    ["d-lighthouses.pdf", "lighthouses.pdf"],
  ] as const;

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    // A scratch folder outside the repository, as a user's folder of documents would be.
    folder = await mkdtemp(join(tmpdir(), "quarry-cli-docs-"));
    await writeFixtures(folder, Object.fromEntries(files));
  });
  afterAll(async () => {
    await quarry?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("ingests a folder: creates the knowledge base, reports each file ready, exits 0", async () => {
    const run = await quarryCli(["ingest", folder, "--kb", "cli-kb", "--url", quarry.url]);
    const out = lines(run.stdout);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    // English documents: the base gets the default model, and the line says why (client/model-choice.test.ts
    // covers a Chinese folder).
    expect(out.some((l) => /^created knowledge base cli-kb with all-MiniLM-L6-v2-int8; 0% of the first files' words are Chinese$/.test(l)), run.stdout).toBe(true);
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
    const before = (await quarry.client.listConversations({})).conversations.length;
    const run = await quarryCli(["ask", "Where is Tallis Instruments headquartered?", "--kb", "cli-kb", "--url", quarry.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Ely");
    // Asked once: no conversation is left behind, and none is named.
    expect((await quarry.client.listConversations({})).conversations).toHaveLength(before);
    expect(run.stdout).not.toContain("conversation ");
    const [answer, sources] = run.stdout.split("\nSources:\n");
    expect(sources, run.stdout).toBeDefined();
    const cited = [...sources.matchAll(/^ {2}\[(\d+)\] ([^,(]+?)[,( ]/gm)].map((m) => ({ marker: m[1], file: m[2] }));
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.map((c) => c.file)).toContain("b-company.md");
    for (const c of cited) {
      expect(files.map(([name]) => name)).toContain(c.file);
      expect(answer).toContain(`[${c.marker}]`);
    }
  });

  it("keeps the question as a conversation when asked to, and names it", async () => {
    const run = await quarryCli(["ask", "Where is Tallis Instruments headquartered?", "--kb", "cli-kb", "--conversation", "--url", quarry.url]);
    expect(run.code, run.stderr).toBe(0);
    const id = /^conversation (\S+) — resume with: quarry chat --conversation \1$/m.exec(run.stdout)?.[1];
    expect(id, run.stdout).toBeDefined();
    const { conversations } = await quarry.client.listConversations({});
    expect(conversations.map((c) => c.id)).toContain(id);
    expect(conversations.find((c) => c.id === id)!.title).toBe("Where is Tallis Instruments headquartered?");
  });

  it("asks about the PDF and cites it with its page", async () => {
    const run = await quarryCli(["ask", PDF_FACT.question, "--kb", "cli-kb", "--url", quarry.url, "--mode", "bm25"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Winstanley");
    // Page 1 holds the answer; the source line says so.
    expect(run.stdout).toMatch(/^ {2}\[\d+\] d-lighthouses\.pdf, p\. 1\b/m);
  });

  it("exports a base to a file and imports it under another name; a truncated file is one readable line and makes nothing", async () => {
    const file = join(folder, "..", `cli-kb-${process.pid}.quarry.gz`);
    try {
      const exported = await quarryCli(["export", "cli-kb", file, "--url", quarry.url]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout.trim()).toBe(`exported cli-kb to ${file}`);
      const imported = await quarryCli(["import", file, "--as", "cli-kb-copy", "--url", quarry.url]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout.trim()).toMatch(new RegExp(`^imported cli-kb-copy: ${files.length} documents, \\d+ chunks, vectors from the archive$`));
      const copy = (await quarry.client.getKnowledgeBase({ knowledgeBase: "cli-kb-copy" })).knowledgeBase!;
      const original = (await quarry.client.getKnowledgeBase({ knowledgeBase: "cli-kb" })).knowledgeBase!;
      expect(copy.chunkCount).toBe(original.chunkCount);

      const bytes = await readFile(file);
      await writeFile(file, bytes.subarray(0, Math.floor(bytes.byteLength / 2)));
      const cut = await quarryCli(["import", file, "--as", "cli-kb-cut", "--url", quarry.url]);
      expect(cut.code).not.toBe(0);
      expect(cut.stderr + cut.stdout).toMatch(/archive is truncated/);
      expect(cut.stderr + cut.stdout).not.toMatch(/\n\s+at /);
      expect((await quarry.client.listKnowledgeBases({})).knowledgeBases.map((k) => k.name)).not.toContain("cli-kb-cut");
    } finally {
      await rm(file, { force: true });
    }
  });

  it("exports a base with its assistants, and the import names the assistant it made", async () => {
    const file = join(folder, "..", `cli-kb-assistants-${process.pid}.quarry.gz`);
    try {
      await quarry.client.createAssistant({ assistant: { name: "cli-helper", knowledgeBases: [{ knowledgeBase: "cli-kb", topK: 4 }] } });
      const exported = await quarryCli(["export", "cli-kb", file, "--with-assistants", "--url", quarry.url]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout.trim()).toBe(`exported cli-kb to ${file} (with its assistants)`);
      const imported = await quarryCli(["import", file, "--as", "cli-kb-team", "--url", quarry.url]);
      expect(imported.code, imported.stderr).toBe(0);
      // cli-helper is taken here: the copy is named after the new base.
      expect(imported.stdout).toMatch(/^assistant cli-helper \(cli-kb-team\) \(as_[0-9a-f]+\), mounting cli-kb-team$/m);
      expect(imported.stdout).toMatch(/^0 corrections$/m);
    } finally {
      await rm(file, { force: true });
    }
  });

  it("exits non-zero with a readable message for a knowledge base that does not exist", async () => {
    const run = await quarryCli(["ask", "anything?", "--kb", "no-such-kb", "--url", quarry.url]);
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/no-such-kb/);
    expect(run.stderr + run.stdout).not.toMatch(/\n\s+at /);
  });

  it("kb set-model re-embeds the base, prints its progress and the switch; an unknown model is one line naming the catalog's", async () => {
    const unknown = await quarryCli(["kb", "set-model", "cli-kb", "no-such-model", "--url", quarry.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr + unknown.stdout).toMatch(/bge-small-zh-v1\.5/);
    expect(unknown.stderr + unknown.stdout).not.toMatch(/\n\s+at /);

    const run = await quarryCli(["kb", "set-model", "cli-kb", "bge-small-en-v1.5", "--url", quarry.url]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const out = lines(run.stdout);
    expect(out[0]).toBe("cli-kb: re-embedding 4 document(s) with bge-small-en-v1.5 (384 dims); searches use all-MiniLM-L6-v2-int8 until the switch");
    expect(out.at(-1)).toBe("cli-kb: switched from all-MiniLM-L6-v2-int8 to bge-small-en-v1.5 (384 dims)");
    const kb = (await quarry.client.getKnowledgeBase({ knowledgeBase: "cli-kb" })).knowledgeBase!;
    expect(kb.embeddingModel).toBe("bge-small-en-v1.5");
    const ask = await quarryCli(["ask", "Where is Tallis Instruments headquartered?", "--kb", "cli-kb", "--url", quarry.url]);
    expect(ask.code, ask.stderr).toBe(0);
    expect(ask.stdout).toContain("Ely");
  });

  it("kb update renames a base and sets its chunking; doc reingest and kb reingest apply it and print each document ready", async () => {
    const content = await readFile(join(folder, "a-clockmaker.txt"));
    await quarry.client.createKnowledgeBase({ name: "cli-edit", chunking: { chunkSize: 200, documentVector: DocumentVectorMode.OFF } });
    const uploaded = (await quarry.client.uploadDocument({ header: { knowledgeBase: "cli-edit", fileName: "clockmaker.txt" }, content })).document!;
    const before = await quarryCli(["doc", "reingest", "clockmaker.txt", "--kb", "cli-edit", "--url", quarry.url]);
    expect(before.code, `${before.stdout}\n${before.stderr}`).toBe(0);
    const chunksAt200 = Number(/^ready\s+clockmaker\.txt \((\d+) chunks\)$/m.exec(lines(before.stdout).join("\n"))?.[1]);
    expect(chunksAt200).toBeGreaterThan(1);

    const bad = await quarryCli(["kb", "update", "cli-edit", "--chunk-size", "100000", "--url", quarry.url]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/token/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const nothing = await quarryCli(["kb", "update", "cli-edit", "--url", quarry.url]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/nothing to update/);

    const update = await quarryCli(["kb", "update", "cli-edit", "--name", "cli-edited", "--chunk-size", "60", "--description", "smaller chunks", "--url", quarry.url]);
    expect(update.code, `${update.stdout}\n${update.stderr}`).toBe(0);
    // The settings not named (here: chunk vectors only, not the default) stay as they were.
    expect(lines(update.stdout)[0]).toMatch(/^cli-edited \(kb_\w+\) — chunks of 60 tokens with \d+ overlap; smaller chunks$/);
    expect((await quarry.client.getKnowledgeBase({ knowledgeBase: "cli-edited" })).knowledgeBase!.chunking!.documentVector).toBe(DocumentVectorMode.OFF);
    expect(update.stdout).toContain("keep their chunks until `quarry kb reingest cli-edited`");

    const reingest = await quarryCli(["doc", "reingest", uploaded.id, "--url", quarry.url]);
    expect(reingest.code, `${reingest.stdout}\n${reingest.stderr}`).toBe(0);
    expect(lines(reingest.stdout)[0]).toMatch(/^re-ingesting clockmaker\.txt as version \d+$/);
    const chunksAt60 = Number(/^ready\s+clockmaker\.txt \((\d+) chunks\)$/m.exec(lines(reingest.stdout).join("\n"))?.[1]);
    expect(chunksAt60).toBeGreaterThan(chunksAt200);

    const all = await quarryCli(["kb", "reingest", "cli-edited", "--url", quarry.url]);
    expect(all.code, `${all.stdout}\n${all.stderr}`).toBe(0);
    expect(lines(all.stdout)).toContain("re-ingesting 1 document");
    expect(lines(all.stdout)).toContain(`ready      clockmaker.txt (${chunksAt60} chunks)`);
  });
});

/**
 * The CLI's own environment, built from scratch like the embedded fixture's: a developer's
 * OPENSEARCH_URL, KAFKA_BROKERS or TIKA_URL must not change what these commands do.
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = ["PATH", "HOME", "QUARRY_MODELS_DIR"];
  return { ...Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]])), QUARRY_LOG_LEVEL: "warn", ...extra };
}

/** A user's mistake: exit 1 and exactly one line on stderr, with no stack trace and nothing on stdout. */
function expectOnePlainLine(run: Run): string {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
  const errLines = run.stderr.split("\n").filter((l) => l.trim() !== "");
  expect(errLines, run.stderr).toHaveLength(1);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  // A server's structured log lines (JSON, on stdout) may precede its failure; nothing else may.
  const plainOut = run.stdout.split("\n").filter((l) => l.trim() !== "" && !isLogLine(l));
  expect(plainOut, run.stdout).toEqual([]);
  return errLines[0];
}

function isLogLine(line: string): boolean {
  try {
    const entry = JSON.parse(line) as { level?: unknown; msg?: unknown };
    return typeof entry.level === "number" && typeof entry.msg === "string";
  } catch {
    return false;
  }
}

/** A port nothing listens on: bound, noted, released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  const { port } = server.address() as { port: number };
  await new Promise((resolveClose) => server.close(resolveClose));
  return port;
}

describe("the quarry CLI speaks plainly", () => {
  let quarry: EmbeddedQuarryFixture;
  let folder: string;
  const env = cleanEnv();

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    folder = await mkdtemp(join(tmpdir(), "quarry-cli-plain-"));
    await writeFile(join(folder, "granite.md"), "# Granite\n\nGranite is an igneous rock of quartz and feldspar, quarried for building stone.\n");
    await writeFile(join(folder, "basalt.txt"), "Basalt is a fine-grained volcanic rock that forms from rapidly cooling lava.\n");
    await writeFile(join(folder, "quarries.csv"), "name,rock,country\nCarrara,marble,Italy\nRock of Ages,granite,United States\n");
    // What the README walkthrough met in docs/: a drawing, of which only its words are read.
    await mkdir(join(folder, "figures"));
    await writeFile(join(folder, "figures", "chart.svg"), '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0 L9 9"/><text x="1" y="1">ingest rate</text></svg>\n');
    // Issue 23: two files of one name in two subfolders are two documents, named by their paths.
    for (const sub of ["intro", "api"]) {
      await mkdir(join(folder, sub));
      await writeFile(join(folder, sub, "README.md"), `# ${sub}\n\nThe ${sub} section of the rock handbook.\n`);
    }
    // Issue 25: a text-like binary is no document, whatever it decodes as.
    await writeFile(join(folder, "tool.exe"), "MZ this is a stub.\n");
    // A format only Tika reads, with TIKA_URL unset: named, not uploaded to fail.
    await writeFile(join(folder, "memo.rtf"), "not opened: skipped by its name");
  });
  afterAll(async () => {
    await quarry?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(await readFile(resolve(process.cwd(), "package.json"), "utf8")) as { version: string };
    const run = await quarryCli(["--version"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  });

  it("rejects --mode fancy before any request, naming the choices", async () => {
    const line = expectOnePlainLine(await quarryCli(["search", "granite", "--kb", "rocks", "--mode", "fancy", "--url", quarry.url], env));
    expect(line).toContain("'fancy'");
    expect(line).toContain("hybrid, bm25, vector");
  });

  it("rejects --top-k abc before any request (no protobuf serialisation error)", async () => {
    const line = expectOnePlainLine(await quarryCli(["ask", "what is granite?", "--kb", "rocks", "--top-k", "abc", "--url", quarry.url], env));
    expect(line).toMatch(/--top-k.*'abc'.*whole number/);
    expect(line).not.toMatch(/serialize|uint32|internal/);
  });

  it("rejects a --url that is no URL", async () => {
    const line = expectOnePlainLine(await quarryCli(["kb", "list", "--url", "localhost 8080"], env));
    expect(line).toMatch(/--url.*http:\/\/ or https:\/\/ URL/);
  });

  it("names a folder that does not exist, and creates nothing on the server", async () => {
    const missing = join(folder, "no-such-folder");
    const line = expectOnePlainLine(await quarryCli(["ingest", missing, "--kb", "never-made", "--url", quarry.url], env));
    expect(line).toBe(`quarry: ${missing}: no such file or folder`);
    const { knowledgeBases } = await quarry.client.listKnowledgeBases({});
    expect(knowledgeBases.map((k) => k.name)).not.toContain("never-made");
  });

  it("says which URL refused the connection and how to start Quarry", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const line = expectOnePlainLine(await quarryCli(["kb", "list", "--url", url], env));
    expect(line).toContain(url);
    expect(line).toContain("npm start");
    expect(line).toContain("--url");
    expect(line).not.toContain("ECONNREFUSED");
  });

  it("explains an https:// URL to the plain-HTTP gateway in a sentence, not an OpenSSL error", async () => {
    const httpsUrl = quarry.url.replace(/^http:/, "https:");
    const line = expectOnePlainLine(await quarryCli(["kb", "list", "--url", httpsUrl], env));
    expect(line).toContain(`${httpsUrl} does not speak HTTPS`);
    expect(line).toContain(`--url ${quarry.url}`);
    expect(line).not.toMatch(/SSL|EPROTO|openssl/i);
  });

  it("refuses a port already in use with one line naming it", async () => {
    const port = new URL(quarry.url).port;
    const dataDir = await mkdtemp(join(tmpdir(), "quarry-cli-port-"));
    try {
      const line = expectOnePlainLine(await quarryCli(["serve", "--port", port, "--data-dir", dataDir], env));
      expect(line).toBe(`quarry: port ${port} is already in use on 127.0.0.1; stop what holds it or choose another with --port`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("names the variable of a malformed engine URL", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "quarry-cli-url-"));
    try {
      const line = expectOnePlainLine(await quarryCli(["serve", "--port", "0", "--data-dir", dataDir], cleanEnv({ OPENSEARCH_URL: "notaurl" })));
      expect(line).toBe('quarry: OPENSEARCH_URL must be an http:// or https:// URL, or several separated by commas (the nodes of one cluster), not "notaurl"');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("ingests only what Quarry parses, says what it skipped and why, and counts documents in plain progress lines", async () => {
    const run = await quarryCli(["ingest", folder, "--kb", "rocks", "--url", quarry.url], env);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const out = lines(run.stdout);
    expect(out).toContain(`skipped    ${join(folder, "tool.exe")}: Quarry does not read .exe files`);
    expect(out).toContain(`skipped    ${join(folder, "memo.rtf")}: RTF document: needs Apache Tika (set TIKA_URL on the server)`);
    // stdout is a pipe here: no bar, but progress as lines, in documents (6 files, not 600 percent points).
    expect(run.stdout).not.toContain("\r");
    expect(out[out.findIndex((l) => l.startsWith("created knowledge base rocks")) + 1]).toBe("ingesting: 0/6 documents done, 0%");
    expect(out).toContain("ingesting: 6/6 documents done, 100%");
    for (const l of out.filter((x) => x.startsWith("ingesting:"))) expect(l).toMatch(/^ingesting: [0-6]\/6 documents done, \d{1,3}%$/);
    expect(out).toContain("ready      intro/README.md (1 chunk)");
    expect(out).toContain("ready      api/README.md (1 chunk)");
    expect(out.some((l) => /^6 ready, 0 failed, 2 skipped in [\d.]+ s$/.test(l)), run.stdout).toBe(true);

    const { documents } = await quarry.client.listDocuments({ knowledgeBase: "rocks" });
    expect(documents.map((d) => d.fileName).sort()).toEqual(["api/README.md", "basalt.txt", "figures/chart.svg", "granite.md", "intro/README.md", "quarries.csv"]);
    // The drawing's words, not its markup.
    const hits = (await quarry.client.search({ query: "ingest rate", knowledgeBases: ["rocks"] })).hits.filter((h) => h.fileName === "figures/chart.svg");
    expect(hits.map((h) => h.chunk?.text)).toEqual(["ingest rate"]);
  });

  it("kb create --parent section makes a two-level base and says so; an unknown mode is refused", async () => {
    const run = await quarryCli(["kb", "create", "handbook-parents", "--chunk-size", "64", "--parent", "section", "--url", quarry.url], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/chunks of 64 tokens with \d+ overlap, each read with its section \(parents up to 1024 tokens\)/);
    const kb = (await quarry.client.getKnowledgeBase({ knowledgeBase: "handbook-parents" })).knowledgeBase!;
    expect(kb.chunking).toMatchObject({ chunkSize: 64, parentMaxTokens: 1024 });
    const wrong = await quarryCli(["kb", "create", "chapters", "--parent", "chapter", "--url", quarry.url], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--parent.*chapter.*(section|choices)/s);
  });

  it("kb create --document-vector chooses whether documents are also embedded whole, and says so; an unknown mode is refused", async () => {
    const off = await quarryCli(["kb", "create", "chunks-only", "--document-vector", "off", "--url", quarry.url], env);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toMatch(/embedded whole/);
    expect((await quarry.client.getKnowledgeBase({ knowledgeBase: "chunks-only" })).knowledgeBase!.chunking!.documentVector).toBe(DocumentVectorMode.OFF);
    const auto = await quarryCli(["kb", "create", "whole-too", "--document-vector", "auto", "--url", quarry.url], env);
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stdout).toMatch(/documents the model reads at least half of also embedded whole/);
    expect((await quarry.client.getKnowledgeBase({ knowledgeBase: "whole-too" })).knowledgeBase!.chunking!.documentVector).toBe(DocumentVectorMode.AUTO);
    const wrong = await quarryCli(["kb", "create", "sometimes", "--document-vector", "sometimes", "--url", quarry.url], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--document-vector.*sometimes.*(auto|choices)/s);
  });

  it("lists knowledge bases under a header, with singular and plural counts", async () => {
    await quarry.client.createKnowledgeBase({ name: "empty-shelf" });
    const run = await quarryCli(["kb", "list", "--url", quarry.url], env);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split("\n");
    expect(header.split(/\s{2,}/)).toEqual(["NAME", "ID", "DOCUMENTS", "CHUNKS", "EMBEDDING MODEL"]);
    const rocks = rows.find((r) => r.startsWith("rocks "))!.split(/\s{2,}/);
    expect(rocks[2]).toBe("6 documents");
    expect(rocks[3]).toMatch(/^(1 chunk|\d+ chunks)$/);
    const empty = rows.find((r) => r.startsWith("empty-shelf "))!.split(/\s{2,}/);
    expect(empty.slice(2, 4)).toEqual(["0 documents", "0 chunks"]);
    // Columns line up: every row's id starts where the header's ID does.
    const idAt = header.indexOf("ID");
    for (const row of rows) expect(row.slice(idAt, idAt + 3)).toBe("kb_");
  });

  it("search --mode bm25 shows the BM25 rank only; hybrid shows both lists and the fusion", async () => {
    const bm25 = await quarryCli(["search", "igneous quartz feldspar", "--kb", "rocks", "--mode", "bm25", "--url", quarry.url], env);
    expect(bm25.code, bm25.stderr).toBe(0);
    expect(bm25.stdout).toMatch(/^1\. granite\.md/m);
    expect(bm25.stdout).toMatch(/^ {3}bm25 #1 \(\d+\.\d{3}\)$/m);
    expect(bm25.stdout).not.toMatch(/vector #|fused/);

    // The default base embeds these short files whole too: where the document ranked shows beside its chunk.
    const hybrid = await quarryCli(["search", "igneous quartz feldspar", "--kb", "rocks", "--url", quarry.url], env);
    expect(hybrid.code, hybrid.stderr).toBe(0);
    expect(hybrid.stdout).toMatch(/^ {3}bm25 #\d+ \([\d.]+\), vector #\d+ \([\d.]+\), document #\d+ \([\d.]+\), fused [\d.]+$/m);

    // The same files in a base of chunk vectors only: no document rank.
    const created = await quarryCli(["kb", "create", "rocks-chunks", "--document-vector", "off", "--url", quarry.url], env);
    expect(created.code, created.stderr).toBe(0);
    const ingested = await quarryCli(["ingest", folder, "--kb", "rocks-chunks", "--url", quarry.url], env);
    expect(ingested.code, ingested.stderr).toBe(0);
    const chunksOnly = await quarryCli(["search", "igneous quartz feldspar", "--kb", "rocks-chunks", "--url", quarry.url], env);
    expect(chunksOnly.code, chunksOnly.stderr).toBe(0);
    expect(chunksOnly.stdout).toMatch(/^ {3}bm25 #\d+ \([\d.]+\), vector #\d+ \([\d.]+\), fused [\d.]+$/m);
    expect(chunksOnly.stdout).not.toMatch(/document #/);
  });
});
