// In embedded mode the gateway shares its process with the embedding model. Ingesting must not
// stop the gateway from answering: a person uploads the next file, watches progress, or asks a
// question while the previous file embeds.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { expectOrderedProgressToReady, upload, watchAll } from "./e2e-helpers.ts";

// About 39 KB of English prose: some 50 chunks, so several embedding batches.
const BIG: FixtureName = "long-prose.txt";

describe("the embedded gateway while documents embed", () => {
  let quarry: EmbeddedQuarryFixture;

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: "busy" });
  });
  afterAll(async () => {
    await quarry?.stop();
  });

  it("reports the middle phases live to a watch started right after the upload", async () => {
    const { document } = await upload(quarry.client, "busy", "live.txt", await fixtureBytes(BIG));
    const log = await watchAll(quarry.client, [document!.id]);
    const updates = log.get(document!.id)!;
    expectOrderedProgressToReady(updates, "live.txt");
    const seen = updates.map((u) => `${DocumentStatus[u.status]} ${u.percent}%`);
    expect(
      updates.some((u) => u.status === DocumentStatus.EMBEDDING),
      `the watch saw only: ${seen.join(", ")}`,
    ).toBe(true);
  });

  it("answers a client in another process without a multi-second stall, without dropping a call, while a document embeds", async () => {
    // The client runs in its own process so that it measures the gateway, not this process's
    // event loop; it speaks the Connect protocol as plain JSON over HTTP/1.1 with keep-alive.
    const content = await fixtureBytes(BIG);
    const pinger = spawnPinger(quarry.url);
    let measured: { latencies: number[]; errors: string[] };
    try {
      await new Promise((r) => setTimeout(r, 500));
      const { document } = await upload(quarry.client, "busy", "slow.txt", content);
      await watchAll(quarry.client, [document!.id]);
    } finally {
      // Also when the upload or the watch failed: a pinger left running would outlive the test.
      measured = await pinger.stop();
    }
    const { latencies, errors } = measured;
    const report = `ListKnowledgeBases latencies (ms): ${latencies.map((l) => l.toFixed(0)).join(", ")}; errors: ${errors.join("; ")}`;
    // The stall this guards against lasted 3–10 s per batch; 2.5 s leaves room for a loaded CI machine.
    expect(Math.max(...latencies), report).toBeLessThan(2_500);
    expect(errors, report).toEqual([]);
    // About ten calls a second for as long as the ingestion took.
    expect(latencies.length, report).toBeGreaterThan(3);
  });

  it("accepts uploads one after another while the earlier ones embed, as `quarry ingest` sends them", async () => {
    // The CLI's order for a folder: the largest first here, then two more at once on the same connection.
    const files: FixtureName[] = [BIG, "notes-zh.md", "company.md"];
    const results: string[] = [];
    for (const name of files) {
      try {
        const res = await upload(quarry.client, "busy", `row-${name}`, await fixtureBytes(name));
        results.push(`${name}: ${res.unchanged ? "unchanged" : "accepted"}`);
      } catch (error) {
        results.push(`${name}: ${String(error)}`);
      }
    }
    expect(results).toEqual(files.map((name) => `${name}: accepted`));
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: "busy" });
    await watchAll(quarry.client, documents.map((d) => d.id));
  });
});

// Calls ListKnowledgeBases every 100 ms until its stdin closes, then prints what it measured.
const PINGER = `
const url = process.argv[1] + "/quarry.gateway.v1.QuarryService/ListKnowledgeBases";
const latencies = [], errors = [];
let running = true;
process.stdin.on("end", () => { running = false; }).resume();
// The test may be gone when this reports (its worker ended early): nothing left to tell then.
process.stdout.on("error", () => process.exit(0));
(async () => {
  while (running) {
    const started = performance.now();
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      await res.text();
      if (!res.ok) errors.push("HTTP " + res.status);
      latencies.push(performance.now() - started);
    } catch (error) {
      errors.push(String(error.cause ?? error));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(JSON.stringify({ latencies, errors }));
})();
`;

function spawnPinger(url: string) {
  const child = spawn(process.execPath, ["-e", PINGER, url], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    async stop(): Promise<{ latencies: number[]; errors: string[] }> {
      child.stdin.end();
      await exited;
      return JSON.parse(out);
    },
  };
}
