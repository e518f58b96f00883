// The gateway's upload against the index's catalog and a SQLite bus: an upload whose event never
// reached the bus (a broker outage after the registration) must be published by the client's retry,
// not answered "unchanged" and left pending for ever (found by `quarry bench soak --backend distributed`).
import { fromBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { DocumentSubmittedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { submitDocument, type UploadDeps } from "../../gateway/upload.ts";
import { Topics, type BusMessage, type EventBus } from "../../lib/bus/event-bus.ts";
import { DirBlobStore } from "../../lib/blobs/dir-blob-store.ts";
import { UnavailableError } from "../../lib/errors.ts";
import { uploadGround } from "../support/upload-ground.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const { catalog, bus, dir, kb } = await uploadGround(cleanups);
  let brokerDown = false;
  // The real bus, refusing while "the broker" is down, as the Kafka bus does during a restart.
  const flaky: EventBus = Object.create(bus, {
    publish: { value: (topic: string, messages: BusMessage[]) => (brokerDown ? Promise.reject(new UnavailableError("broker restarting")) : bus.publish(topic, messages)) },
  });
  const deps: UploadDeps = {
    bus: flaky,
    limits: { maxUploadBytes: 1 << 20, inlineMaxBytes: 1 << 20 },
    blobs: new DirBlobStore(dir),
    resolveKnowledgeBase: async () => kb,
    register: (input) => catalog.registerDocument(input),
  };
  const submitted = async () => {
    const seen: number[] = [];
    const sub = await bus.subscribe({
      group: `test.${Math.random()}`,
      topics: [Topics.documentsSubmitted],
      handler: async (m) => void seen.push(Number(fromBinary(DocumentSubmittedSchema, m.value).version)),
    });
    await new Promise((r) => setTimeout(r, 200));
    await sub.close({ graceMs: 0 });
    return seen;
  };
  return { catalog, deps, submitted, setBrokerDown: (down: boolean) => (brokerDown = down) };
}

const upload = { knowledgeBase: "handbook", fileName: "company.md", mimeType: "text/markdown", metadata: {}, content: new TextEncoder().encode("# Tallis\nA maker of balances.") };

describe("an upload whose event did not reach the bus", () => {
  it("is published by the retry of the same content", async () => {
    const t = await setup();
    t.setBrokerDown(true);
    await expect(submitDocument(t.deps, upload)).rejects.toThrow(UnavailableError);
    t.setBrokerDown(false);
    const retry = await submitDocument(t.deps, upload);
    expect(retry.unchanged).toBe(false);
    expect(retry.document.status).toBe("pending");
    expect(await t.submitted()).toEqual([retry.document.version]);
  });

  it("is unchanged once a stage has taken it", async () => {
    const t = await setup();
    const first = await submitDocument(t.deps, upload);
    await t.catalog.applyProgress({
      documentId: first.document.id,
      knowledgeBaseId: first.document.knowledgeBaseId,
      version: first.document.version,
      phase: "parsing",
      percent: 10,
      message: "",
      error: "",
      chunkCount: 0,
      tokenCount: 0,
      at: new Date(),
    });
    const again = await submitDocument(t.deps, upload);
    expect(again.unchanged).toBe(true);
    expect(await t.submitted()).toEqual([first.document.version]);
  });
});
