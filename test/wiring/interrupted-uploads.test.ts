// An upload stopped at each of its steps (the process killed there: the step never completes and
// nothing after it runs), then the start-up sweep of the next process. Whatever the step, the
// document ends with either nothing (no catalog row) or a row that is submitted or failed with a
// reason: never a row pending for good. The gateway's upload path, the index's SQLite catalog, a
// SQLite bus and the originals folder, all real; progress reaches the catalog as the index's status
// keeper applies it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { DocumentSubmittedSchema, IngestionProgressSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { NOT_KEPT_REASON, sweepInterruptedUploads } from "../../gateway/interrupted-uploads.ts";
import { Originals } from "../../gateway/originals.ts";
import { DirBlobStore } from "../../lib/blobs/dir-blob-store.ts";
import { publishSubmission, submissionContent, submitDocument, type UploadDeps } from "../../gateway/upload.ts";
import { Topics, type EventBus, type OutgoingMessage } from "../../lib/bus/event-bus.ts";
import { silentLogger } from "../../lib/logger.ts";
import { progressFromProto, publishProgress } from "../../lib/pipeline/progress.ts";
import { uploadGround } from "../support/upload-ground.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const never = () => new Promise<never>(() => {});

type Step = "keep the original" | "register" | "submit" | "mark submitted" | "nothing";

async function setup(inlineMaxBytes: number) {
  const { catalog, bus, dir, kb } = await uploadGround(cleanups);
  const blobs = new DirBlobStore(join(dir, "blobs"));
  const originals = new Originals(blobs);
  const limits = { maxUploadBytes: 1 << 20, inlineMaxBytes };

  /** The first process: its upload dies at `killAt`. */
  const uploadKilledAt = async (killAt: Step) => {
    // Resolved when the upload reaches the step it dies at: everything before it has landed.
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    const dieHere = () => (died(), never());
    let publishes = 0;
    const killed: EventBus = Object.create(bus, {
      publish: {
        value: (topic: string, messages: OutgoingMessage[]) => {
          publishes++;
          if ((killAt === "submit" && publishes === 1) || (killAt === "mark submitted" && publishes === 2)) return dieHere();
          return bus.publish(topic, messages);
        },
      },
    });
    const deps: UploadDeps = {
      bus: killed,
      limits,
      blobs,
      resolveKnowledgeBase: async () => kb,
      register: (input) => (killAt === "register" ? dieHere() : catalog.registerDocument(input)),
      keepOriginal: (k, d, bytes) => (killAt === "keep the original" ? dieHere() : originals.save(k, d, bytes)),
    };
    const finished = submitDocument(deps, upload);
    await (killAt === "nothing" ? finished : dead);
  };

  /** Every message on a topic so far. */
  const messages = (topic: string) => bus.db.prepare("SELECT value FROM bus_messages WHERE topic = ? ORDER BY seq").all(topic) as { value: Buffer }[];
  /** The status keeper's work: every progress event applied to the catalog, in order. */
  const applyProgress = async () => {
    for (const { value } of messages(Topics.ingestionProgress)) await catalog.applyProgress(progressFromProto(fromBinary(IngestionProgressSchema, value)));
  };

  /** The next process's start-up sweep. */
  const sweep = () =>
    sweepInterruptedUploads(
      {
        logger: silentLogger,
        pendingDocuments: async () => (await catalog.listDocuments(kb.id)).filter((d) => d.status === "pending"),
        readOriginal: (k, d) => originals.read(k, d),
        resubmit: async (doc, content) => publishSubmission(bus, doc, await submissionContent(limits, blobs, doc.id, doc.version, content)),
        fail: (doc, reason) => publishProgress(bus, { documentId: doc.id, knowledgeBaseId: doc.knowledgeBaseId, version: doc.version }, { phase: "failed", percent: 0, error: reason }),
      },
      new Date(Date.now() + 1),
    );

  const submissions = () => messages(Topics.documentsSubmitted).map(({ value }) => fromBinary(DocumentSubmittedSchema, value));
  return { catalog, kb, originals, uploadKilledAt, applyProgress, sweep, submissions };
}

const upload = { knowledgeBase: "handbook", fileName: "company.md", mimeType: "text/markdown", metadata: { team: "ops" }, content: new TextEncoder().encode("# Tallis\nA maker of balances.") };
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("an upload killed at each step, then the next start's sweep", () => {
  for (const inline of [true, false]) {
    const carried = inline ? "inline" : "by reference";
    it.each<[Step, string]>([
      ["keep the original", "nothing: no row, no submission"],
      ["register", "nothing: the bytes without a row, no submission"],
      ["submit", "the row submitted again by the sweep"],
      ["mark submitted", "the row submitted again (a duplicate the stages skip)"],
      ["nothing", "the one submission, left alone by the sweep"],
    ])(`killed at "%s" (content ${carried}) leaves %s`, async (step) => {
      const t = await setup(inline ? 1 << 20 : 8);
      await t.uploadKilledAt(step);
      await t.applyProgress();
      await t.sweep();
      await t.applyProgress();
      const rows = await t.catalog.listDocuments(t.kb.id);
      const submissions = t.submissions();
      if (step === "keep the original" || step === "register") {
        expect(rows).toEqual([]);
        expect(submissions).toEqual([]);
        return;
      }
      expect(rows).toHaveLength(1);
      const [row] = rows;
      // Submitted and marked: the pipeline has it; nothing stays pending at 0%.
      expect(row).toMatchObject({ status: "pending", progressPercent: 1 });
      expect(submissions.length).toBe(step === "submit" || step === "nothing" ? 1 : 2);
      for (const s of submissions) {
        expect(s).toMatchObject({ documentId: row.id, version: BigInt(row.version), fileName: "company.md", metadata: { team: "ops" } });
        const bytes = s.content.case === "inlineContent" ? s.content.value : new Uint8Array(await readFile(new URL(s.content.value as string)));
        expect(s.content.case).toBe(inline ? "inlineContent" : "contentUri");
        expect(text(bytes)).toBe(text(upload.content));
      }
    });
  }

  it("fails a pending row whose original is gone, with the reason, rather than leave it pending", async () => {
    const t = await setup(1 << 20);
    await t.uploadKilledAt("submit");
    await t.originals.removeKnowledgeBase(t.kb.id);
    await t.sweep();
    await t.applyProgress();
    const [row] = await t.catalog.listDocuments(t.kb.id);
    expect(row).toMatchObject({ status: "failed", errorMessage: NOT_KEPT_REASON });
    expect(t.submissions()).toEqual([]);
  });

  it("leaves rows written after this process started alone (an upload in progress beside the sweep)", async () => {
    const t = await setup(1 << 20);
    await t.uploadKilledAt("submit");
    const result = await sweepInterruptedUploads(
      { logger: silentLogger, pendingDocuments: () => t.catalog.listDocuments(t.kb.id), readOriginal: t.originals.read.bind(t.originals), resubmit: never, fail: never },
      new Date(0),
    );
    expect(result).toEqual({ resubmitted: [], failed: [] });
  });
});
