// Every stage's message delivered twice (what a lapsed lease or a crash after publishing does) to
// the services as the embedded mode assembles them: the document still ends ready with each chunk
// stored once, and the expensive step runs once — every chunk is embedded once, since the embedder
// skips a version it already published and the index one it already stored. The embedding model is
// the OpenAI-compatible stub (to count what is embedded); the rest is real (SQLite file, bus, threads).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { Topics, type EventBus } from "../../lib/bus/event-bus.ts";
import { startInProcessPipeline, type InProcessPipeline } from "./in-process-pipeline.ts";

const STAGE_TOPICS: string[] = [Topics.documentsSubmitted, Topics.documentsParsed, Topics.chunksCreated, Topics.chunksEmbedded];

/** The real bus, except that each stage's handler gets every message twice in a row. */
function deliveringTwice(bus: EventBus): EventBus {
  return Object.create(bus, {
    subscribe: {
      value: (options: Parameters<EventBus["subscribe"]>[0]) =>
        bus.subscribe(
          options.topics.every((t) => STAGE_TOPICS.includes(t))
            ? {
                ...options,
                handler: async (message) => {
                  await options.handler(message);
                  await options.handler(message);
                },
              }
            : options,
        ),
    },
  });
}

let pipeline: InProcessPipeline;
beforeAll(async () => {
  // The services get every stage message twice; the test reads the SQLite log itself to know when
  // every double delivery is done.
  pipeline = await startInProcessPipeline({}, deliveringTwice);
}, 120_000);
afterAll(() => pipeline?.close());

/** Waits until each stage's group has committed everything on its topic (every double delivery done). */
async function settled(): Promise<void> {
  const { bus } = pipeline;
  const groups: Record<string, string> = { parser: Topics.documentsSubmitted, chunker: Topics.documentsParsed, embedder: Topics.chunksCreated, index: Topics.chunksEmbedded };
  const lag = () =>
    Object.entries(groups).some(([group, topic]) => {
      const end = bus.db.prepare("SELECT MAX(seq) AS seq FROM bus_messages WHERE topic = ?").get(topic) as { seq: number | null };
      const done = bus.db.prepare("SELECT committed_seq AS seq FROM bus_offsets WHERE group_id = ? AND topic = ?").get(group, topic) as { seq: number } | undefined;
      return (end.seq ?? 0) > (done?.seq ?? 0);
    });
  for (let i = 0; lag(); i++) {
    if (i > 600) throw new Error("the stages did not finish their deliveries within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const count = (topic: string) => (pipeline.bus.db.prepare("SELECT COUNT(*) AS n FROM bus_messages WHERE topic = ?").get(topic) as { n: number }).n;

describe("every stage's message delivered twice", () => {
  it("ends ready with each chunk stored once, every chunk embedded once and one chunks.embedded", async () => {
    const { client, index, stub } = pipeline;
    const { knowledgeBase } = await client.createKnowledgeBase({ name: "twice", chunking: { chunkSize: 24, chunkOverlap: 0 } });
    const text = Array.from({ length: 8 }, (_, i) => `Section ${i}: the expense policy pays claims of type ${i} within ${i + 3} days of approval.`).join("\n\n");
    const { document } = await client.uploadDocument({ header: { knowledgeBase: knowledgeBase!.id, fileName: "policy.txt", mimeType: "text/plain" }, content: new TextEncoder().encode(text) });
    let current = document!;
    for (let i = 0; current.status !== DocumentStatus.READY; i++) {
      expect(current.status, current.errorMessage).not.toBe(DocumentStatus.FAILED);
      if (i > 600) throw new Error(`not ready within 60 s: ${DocumentStatus[current.status]}`);
      await new Promise((r) => setTimeout(r, 100));
      current = (await client.getDocument({ documentId: document!.id })).document!;
    }
    await settled();
    expect(current.chunkCount).toBeGreaterThan(3);

    // Each stage did get every message twice: two parses, so two documents.parsed, so four chunkings.
    expect(count(Topics.documentsParsed)).toBe(2);
    expect(count(Topics.chunksCreated)).toBe(4);
    // Of four chunks.created (eight deliveries) one was embedded and published.
    expect(count(Topics.chunksEmbedded)).toBe(1);
    const embedded = stub.requests.filter((r) => r.path === "/v1/embeddings").flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
    expect(new Set(embedded).size).toBe(embedded.length);
    expect(embedded.length).toBeGreaterThanOrEqual(current.chunkCount);

    const positions = Array.from({ length: current.chunkCount * 2 }, (_, index) => ({ documentId: document!.id, index, knowledgeBaseId: knowledgeBase!.id }));
    const stored = (await index.getChunks({ positions })).chunks;
    expect(stored.map((c) => c.index)).toEqual(Array.from({ length: current.chunkCount }, (_, i) => i));
  }, 120_000);
});
