// Issue 23, case 7: a Quarry that stops (SIGTERM runs the same stop) while a WatchIngestion stream
// follows an unfinished document ends that stream with UNAVAILABLE and a reason, over Connect and
// gRPC, so the client reconnects, instead of a clean end-of-stream that reads as "done" (quarry
// ingest does: cli/follow-ingestion.test.ts).
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";

// Long enough that its parse, chunking and embedding take far longer than the stop.
const bigText = () => Array.from({ length: 20_000 }, (_, i) => `Paragraph ${i} records tide ${i % 97} at harbour ${i % 13}, a ${i % 7}-knot wind.`).join("\n\n");

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
