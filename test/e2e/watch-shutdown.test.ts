// Issue 23, case 7: a Quarry that stops (SIGTERM runs the same stop) while a WatchIngestion stream
// follows an unfinished document ends that stream with UNAVAILABLE and a reason, over Connect and
// gRPC, so the client reconnects, instead of a clean end-of-stream that reads as "done"; and
// `quarry ingest` does reconnect: its watch outlives a restart of the gateway.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { PassThrough } from "node:stream";
import { followIngestion } from "../../cli/commands.ts";
import { gatewayClient } from "../../client/gateway-client.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";

// Long enough that its parse, chunking and embedding take far longer than the stop.
const bigText = (paragraphs = 20_000) => Array.from({ length: paragraphs }, (_, i) => `Paragraph ${i} records tide ${i % 97} at harbour ${i % 13}, a ${i % 7}-knot wind.`).join("\n\n");

describe("watch streams on shutdown", () => {
  for (const protocol of ["connect", "grpc"] as const) {
    it(`ends an unfinished document's WatchIngestion with UNAVAILABLE over ${protocol}`, async () => {
      const quarry = await startEmbeddedQuarry();
      let stopped: Promise<void> | undefined;
      try {
        const client = quarry.clientFor(protocol);
        await client.createKnowledgeBase({ name: "tides" });
        const { document } = await client.uploadDocument({ header: { knowledgeBase: "tides", fileName: "tides.txt" }, content: new TextEncoder().encode(bigText()) });
        const seen: DocumentStatus[] = [];
        const outcome = await (async () => {
          for await (const update of client.watchIngestion({ documentIds: [document!.id] })) {
            seen.push(update.status);
            stopped ??= quarry.stop();
          }
          return "ended cleanly";
        })().catch((error: unknown) => ConnectError.from(error));
        expect(seen.length).toBeGreaterThan(0);
        expect(seen).not.toContain(DocumentStatus.READY);
        expect(outcome).toBeInstanceOf(ConnectError);
        expect((outcome as ConnectError).code).toBe(Code.Unavailable);
        expect((outcome as ConnectError).rawMessage).toMatch(/shutting down with 1 watched document\(s\) unfinished; watch again/);
      } finally {
        await (stopped ?? quarry.stop());
      }
    }, 120_000);
  }
});

describe("quarry ingest's watch across a restart", () => {
  it("takes the watch up again when the gateway comes back, and reports the document ready", async () => {
    const first = await startEmbeddedQuarry();
    const port = new URL(first.url).port;
    const client = gatewayClient(first.url);
    await client.createKnowledgeBase({ name: "tides" });
    const { document } = await client.uploadDocument({ header: { knowledgeBase: "tides", fileName: "tides.txt" }, content: new TextEncoder().encode(bigText(1_000)) });
    let second: Awaited<ReturnType<typeof startEmbeddedQuarry>> | undefined;
    // The first progress line comes after the first update: the server is stopped then, and started
    // again on the same port and data (the event log resumes the document where it was).
    let restarted: Promise<void> | undefined;
    let statusAtStop: DocumentStatus | undefined;
    const out = new PassThrough();
    out.on("data", () => {
      restarted ??= (async () => {
        statusAtStop = (await client.getDocument({ documentId: document!.id })).document!.status;
        await first.stop({ keepData: true });
        second = await startEmbeddedQuarry({ dataDir: first.dataDir, env: { QUARRY_PORT: port } });
      })();
    });
    try {
      const summary = await followIngestion(client, [document!.id], out, 50);
      await restarted;
      expect(restarted).toBeDefined();
      // The watch was cut with the document unfinished, so it was taken up again to see it ready.
      expect(statusAtStop).not.toBe(DocumentStatus.READY);
      expect(summary).toEqual({ ready: 1, failed: 0 });
      expect((await client.getDocument({ documentId: document!.id })).document?.status).toBe(DocumentStatus.READY);
    } finally {
      await restarted?.catch(() => undefined);
      await (second ?? first).stop();
    }
  }, 240_000);
});
