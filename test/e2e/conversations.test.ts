// Conversations and assistants on the embedded Quarry (SQLite catalog, and Elasticsearch when ELASTICSEARCH_URL is set), over real HTTP, with the
// OpenAI-compatible stub as the chat model: see test/support/conversation-scenario.ts.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  conversationScenario,
  conversationStubEnv,
  FIRST_QUESTION,
  FOLLOW_UP,
  MANUAL,
  STANDALONE,
  startConversationStub,
  STUB_MODEL,
} from "../support/conversation-scenario.ts";
import { elasticsearchTestSpace } from "../../services/index/testing/elasticsearch-test-support.ts";
import { describeWithEngine } from "../support/engines.ts";
import { upload, watchAll } from "./e2e-helpers.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import type { OpenAiStub } from "../../lib/testing/openai-stub.ts";

describe("conversations and assistants on embedded Quarry", () => {
  let quarry: EmbeddedQuarryFixture;
  let stub: OpenAiStub;
  beforeAll(async () => {
    stub = await startConversationStub();
    quarry = await startEmbeddedQuarry({ env: conversationStubEnv(stub) });
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  conversationScenario(() => ({ client: quarry.client, stub }));
});

// The same with the index on Elasticsearch: assistants, conversations and turns in its catalog.
describeWithEngine("ELASTICSEARCH_URL", "conversations and assistants on embedded Quarry with the Elasticsearch catalog", (url) => {
  let quarry: EmbeddedQuarryFixture;
  let stub: OpenAiStub;
  const space = elasticsearchTestSpace(url);
  beforeAll(async () => {
    stub = await startConversationStub();
    quarry = await startEmbeddedQuarry({ env: { ...conversationStubEnv(stub), ELASTICSEARCH_URL: url, QUARRY_ELASTICSEARCH_PREFIX: space.prefix.replace(/-$/, "") } });
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
    await space.cleanup();
  });

  conversationScenario(() => ({ client: quarry.client, stub }));
});

// The CLI against the same kind of instance: `quarry assistant`, `quarry chat` with stdin piped,
// `quarry turn show`, `quarry conversations`, as a person runs them.
const BIN = resolve(process.cwd(), "bin/quarry.mjs");

function quarryCli(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, QUARRY_API_KEY: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe("quarry chat, assistant, conversations and turn on embedded Quarry", () => {
  let quarry: EmbeddedQuarryFixture;
  let stub: OpenAiStub;
  const kb = "cli-docs";
  beforeAll(async () => {
    stub = await startConversationStub();
    quarry = await startEmbeddedQuarry({ env: conversationStubEnv(stub) });
    await quarry.client.createKnowledgeBase({ name: kb });
    const doc = await upload(quarry.client, kb, "skerry-manual.md", new TextEncoder().encode(MANUAL));
    await watchAll(quarry.client, [doc.document!.id]);
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  it("creates, lists, shows, updates and deletes an assistant", async () => {
    const created = await quarryCli(["assistant", "create", "cli-keeper", "--kb", `${kb}:3:5`, "--prompt", "Be brief.", "--hide-file-names", "--url", quarry.url]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^created cli-keeper \(as_[0-9a-f]{16}\)/);
    expect(created.stdout).toContain(`knowledge base ${kb} (kb_`);
    expect(created.stdout).toContain("top-k 3, priority 5");
    expect(created.stdout).toContain("file names hidden from the model");
    expect((await quarryCli(["assistant", "list", "--url", quarry.url])).stdout).toContain(`cli-keeper\tas_`);
    const updated = await quarryCli(["assistant", "update", "cli-keeper", "--kb", `${kb}:4:1`, "--mode", "bm25", "--url", quarry.url]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain("top-k 4, priority 1");
    expect(updated.stdout).toContain("retrieval: bm25");
    // Unchanged by the update: the prompt and the hidden file names.
    const shown = await quarryCli(["assistant", "show", "cli-keeper", "--url", quarry.url]);
    expect(shown.stdout).toContain("system prompt: Be brief.");
    expect(shown.stdout).toContain("file names hidden from the model");
    const refused = await quarryCli(["assistant", "create", "no-bases", "--url", quarry.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("needs at least one knowledge base (invalid_argument)");
  });

  it("holds a conversation from piped stdin, then shows the turn, lists, shows and deletes the conversation", async () => {
    const chat = await quarryCli(["chat", "--assistant", "cli-keeper", "--url", quarry.url], `${FIRST_QUESTION}\n\n${FOLLOW_UP}\n`);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.match(/It was ground in Paris \[1\]\./g)).toHaveLength(2);
    expect(chat.stdout).toContain(`(searched for: ${STANDALONE})`);
    expect(chat.stdout).toContain("[1] skerry-manual.md");
    const turns = [...chat.stdout.matchAll(/\(turn (tn_[0-9a-f]+)\)/g)].map((m) => m[1]);
    expect(turns).toHaveLength(2);
    const conversation = /conversation (cv_[0-9a-f]+) — resume with: quarry chat --conversation/.exec(chat.stdout)![1];

    const turn = await quarryCli(["turn", "show", turns[1], "--url", quarry.url]);
    expect(turn.code, turn.stderr).toBe(0);
    expect(turn.stdout).toContain(`turn ${turns[1]} — #2 of conversation ${conversation}`);
    expect(turn.stdout).toContain(`searched for: ${STANDALONE} (rewritten: rewritten by ${STUB_MODEL})`);
    expect(turn.stdout).toMatch(/#1 skerry-manual\.md \S+ score/);
    expect(turn.stdout).toContain("→ context [1]");
    expect(turn.stdout).toContain(`model: ${STUB_MODEL}`);
    const json = JSON.parse((await quarryCli(["turn", "show", turns[1], "--json", "--url", quarry.url])).stdout);
    expect(json.provenance.retrievalQuery).toBe(STANDALONE);

    // Resuming continues the numbering.
    const resumed = await quarryCli(["chat", "--conversation", conversation, "--url", quarry.url], `${FOLLOW_UP}\n`);
    expect(resumed.code, resumed.stderr).toBe(0);
    const listed = await quarryCli(["conversations", "list", "--assistant", "cli-keeper", "--url", quarry.url]);
    expect(listed.stdout).toContain(`${conversation}\t`);
    expect(listed.stdout).toContain(`3 turn(s)\t${FIRST_QUESTION}`);
    const shown = await quarryCli(["conversations", "show", conversation, "--url", quarry.url]);
    expect(shown.stdout).toContain(`#1 (${turns[0]})\n> ${FIRST_QUESTION}`);
    expect(shown.stdout).toContain(`#3 (`);
    expect((await quarryCli(["conversations", "delete", conversation, "--url", quarry.url])).stdout).toBe(`deleted ${conversation}\n`);
    const gone = await quarryCli(["conversations", "show", conversation, "--url", quarry.url]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("(not_found)");
    // A question that fails is reported and the session goes on; the exit code says something failed.
    const partly = await quarryCli(["chat", "--assistant", "no-such-assistant", "--url", quarry.url], `${FIRST_QUESTION}\n`);
    expect(partly.code).toBe(1);
    expect(partly.stderr).toContain("no assistant has the id or name no-such-assistant (not_found)");
    const missing = await quarryCli(["chat", "--url", quarry.url], "hello\n");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("name an --assistant");
  });
});
