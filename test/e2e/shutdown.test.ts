// SIGTERM stops a busy Quarry within its grace period: new connections are refused at once,
// streams in flight end, the process exits 0, and what it released is finished after a restart.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, describe, expect, it } from "vitest";
import { largeTextDocument, uploadAndTrack } from "../../bench/document-timing.ts";
import { connectionRefused, startQuarryProcess, type QuarryProcess } from "../../bench/quarry-process.ts";
import { gatewayClient } from "../../client/gateway-client.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { Health } from "../../gen/grpc/health/v1/health_pb.ts";
import { describeWithEngine } from "../support/engines.ts";

const GRACE_MS = 3_000;
/** Process exit and the last log lines, on a machine shared with others. */
const MARGIN_MS = 4_000;

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
  QUARRY_SHUTDOWN_GRACE_MS: String(GRACE_MS),
});

/** Until the process logs that it is draining (it stops listening in the same step), or has exited. */
async function tookTheSignal(quarry: QuarryProcess): Promise<void> {
  const until = performance.now() + GRACE_MS;
  while (performance.now() < until && quarry.child.exitCode === null && !quarry.output().includes("draining")) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("SIGTERM on a busy embedded server", () => {
  let dataDir: string | undefined;
  let running: QuarryProcess | undefined;
  afterAll(async () => {
    if (running && running.child.exitCode === null) running.child.kill("SIGKILL");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses new connections, ends streams, exits 0 within the grace, and a restart finishes every document", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "quarry-sigterm-"));
    const env = { ...baseEnv(), QUARRY_DATA_DIR: dataDir, QUARRY_PORT: "0", QUARRY_HOST: "127.0.0.1" };
    running = await startQuarryProcess(["serve"], env);
    const client = gatewayClient(running.url);
    await client.createKnowledgeBase({ name: "busy", chunking: { chunkSize: 48, chunkOverlap: 0 } });
    const large = uploadAndTrack(client, "busy", "large.txt", largeTextDocument(3_000));
    large.ready.catch(() => {}); // ends with the server; checked after the restart
    await large.vectorizing;
    const small = await Promise.all(
      [1, 2, 3].map((n) => client.uploadDocument({ header: { knowledgeBase: "busy", fileName: `small-${n}.txt` }, content: new TextEncoder().encode(`small document number ${n}`) })),
    );
    const ids = [...small.map((r) => r.document!.id), ...(await client.listDocuments({ knowledgeBase: "busy" })).documents.map((d) => d.id)];
    const documentIds = [...new Set(ids)];
    expect(documentIds).toHaveLength(4);

    // A stream in flight when the signal comes: it must end, not hold the drain open.
    const stream = (async () => {
      try {
        for await (const _ of client.watchIngestion({ documentIds })) void _;
        return "ended";
      } catch (error) {
        return `ended with ${String(error)}`;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));

    const signalledAt = performance.now();
    running.child.kill("SIGTERM");
    // "At once" means once the process has taken the signal: on a loaded machine that can be later
    // than any fixed wait, so the check waits for the process's own "draining" line.
    await tookTheSignal(running);
    const stillRunning = running.child.exitCode === null;
    const refusedWhileDraining = await connectionRefused(running.port);
    const streamEnd = await Promise.race([stream, new Promise((r) => setTimeout(() => r("still open"), GRACE_MS + MARGIN_MS))]);
    const exit = await Promise.race([running.exited, new Promise<undefined>((r) => setTimeout(r, GRACE_MS + MARGIN_MS + 30_000))]);
    const report = `exit ${JSON.stringify(exit)} after ${exit ? Math.round(exit.at - signalledAt) : "-"} ms; stream: ${streamEnd}\n${running.output().slice(-3_000)}`;
    console.log(`embedded: SIGTERM → exit ${exit?.code} after ${exit ? Math.round(exit.at - signalledAt) : "-"} ms (grace ${GRACE_MS} ms); stream ${streamEnd}; new connection refused while draining: ${stillRunning ? refusedWhileDraining : "(already exited)"}`);
    expect(exit, `the server did not exit: ${report}`).toBeDefined();
    expect(exit!.code, report).toBe(0);
    expect(exit!.at - signalledAt, report).toBeLessThan(GRACE_MS + MARGIN_MS);
    expect(streamEnd, report).not.toBe("still open");
    if (stillRunning) expect(refusedWhileDraining, `a new connection was accepted after SIGTERM: ${report}`).toBe(true);
    expect(await connectionRefused(running.port)).toBe(true);

    // The restart picks up what the first process released: every document ends READY.
    running = await startQuarryProcess(["serve"], env);
    const again = gatewayClient(running.url);
    const final = new Map<string, { status: DocumentStatus; chunks: number; error: string }>();
    for await (const update of again.watchIngestion({ documentIds }, { signal: AbortSignal.timeout(600_000) })) {
      final.set(update.documentId, { status: update.status, chunks: update.chunkCount, error: update.error });
    }
    const statuses = [...final.values()];
    expect(statuses.map((s) => DocumentStatus[s.status]), JSON.stringify(statuses)).toEqual(documentIds.map(() => "READY"));
    expect(Math.max(...statuses.map((s) => s.chunks))).toBe(3_000);
    running.child.kill("SIGTERM");
    expect((await running.exited).code).toBe(0);
  }, 900_000);
});

describeWithEngine("KAFKA_BROKERS", "SIGTERM on a distributed service process", (kafka) => {
  it("ends a health watch stream, refuses new connections and exits 0 within the grace", async () => {
    const env = {
      ...baseEnv(),
      KAFKA_BROKERS: kafka,
      QUARRY_TOPIC_PREFIX: `sigterm-${randomBytes(4).toString("hex")}.`,
      QUARRY_PARSER_PORT: "0",
      QUARRY_HOST: "127.0.0.1",
    };
    const parser = await startQuarryProcess(["serve", "parser"], env);
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: parser.url }));
      const watch = (async () => {
        let updates = 0;
        try {
          for await (const _ of health.watch({ service: "" })) updates++;
          return `ended after ${updates} updates`;
        } catch (error) {
          return `ended with ${String(error)} after ${updates} updates`;
        }
      })();
      await new Promise((r) => setTimeout(r, 500));
      const signalledAt = performance.now();
      parser.child.kill("SIGTERM");
      const exit = await Promise.race([parser.exited, new Promise<undefined>((r) => setTimeout(r, GRACE_MS + MARGIN_MS + 30_000))]);
      const report = `exit ${JSON.stringify(exit)} after ${exit ? Math.round(exit.at - signalledAt) : "-"} ms\n${parser.output().slice(-2_000)}`;
      console.log(`parser: SIGTERM → exit ${exit?.code} after ${exit ? Math.round(exit.at - signalledAt) : "-"} ms (grace ${GRACE_MS} ms)`);
      expect(exit, report).toBeDefined();
      expect(exit!.code, report).toBe(0);
      expect(exit!.at - signalledAt, report).toBeLessThan(GRACE_MS + MARGIN_MS);
      expect(await watch, report).toMatch(/^ended/);
      expect(await connectionRefused(parser.port)).toBe(true);
    } finally {
      if (parser.child.exitCode === null) parser.child.kill("SIGKILL");
    }
  }, 120_000);
});
