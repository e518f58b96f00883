// quarry ingest's watch (followIngestion) across a restart of the gateway: the stream it follows
// ends with UNAVAILABLE (or a cut connection, then nobody listening); it takes the watch up again
// once the gateway answers on the same address and reports the document ready.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import { gatewayClient } from "../client/gateway-client.ts";
import { startEmbeddedQuarry } from "../test/support/embedded-quarry.ts";
import { followIngestion } from "./commands.ts";

// About 80 KB: its embedding outlasts a stop of the server, and a restarted one finishes it in seconds.
const tideTable = () => Array.from({ length: 1_000 }, (_, i) => `On day ${i} the harbour logged tide ${i % 97} and a ${i % 7}-knot wind.`).join("\n\n");

describe("quarry ingest's watch across a restart", () => {
  it("takes the watch up again when the gateway comes back, and reports the document ready", async () => {
    const first = await startEmbeddedQuarry();
    const port = new URL(first.url).port;
    const client = gatewayClient(first.url);
    await client.createKnowledgeBase({ name: "tides" });
    const { document } = await client.uploadDocument({ header: { knowledgeBase: "tides", fileName: "tides.txt" }, content: new TextEncoder().encode(tideTable()) });
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
