// The parsing stage on the SQLite bus: documents.submitted in, documents.parsed and progress out.
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { DocumentParsedSchema, DocumentSubmittedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { silentLogger } from "../../lib/logger.ts";
import { stageHarness, type StageHarness } from "../../lib/pipeline/testing/stage-harness.ts";
import { BuiltinParser } from "./builtin-parser.ts";
import { RoutingParser } from "./routing-parser.ts";
import { startParserWorker } from "./worker.ts";

const kb = { id: "kb_1", name: "docs" } as KnowledgeBase;
let h: StageHarness;
let worker: Subscription;
beforeEach(async () => {
  h = await stageHarness([Topics.documentsParsed]);
  worker = await startParserWorker({
    bus: h.bus,
    // As main.ts composes it (no Tika): the routing parser applies the reading rule.
    parser: new RoutingParser({ builtin: new BuiltinParser() }),
    knowledgeBase: async (id) => {
      if (id !== kb.id && id !== kb.name) throw new NotFoundError(`knowledge base ${id} does not exist`);
      return kb;
    },
    logger: silentLogger,
  });
});
afterEach(async () => {
  await worker.close({ graceMs: 0 });
  await h.close();
});

const submitted = (content: Uint8Array, fileName = "guide.md") =>
  create(DocumentSubmittedSchema, { documentId: "doc_1", knowledgeBaseId: "kb_1", fileName, version: 7n, content: { case: "inlineContent", value: content } });

describe("parser worker", () => {
  it("parses a submitted document onto documents.parsed, reporting parsing with the document's descriptor", async () => {
    const bytes = new TextEncoder().encode("# Account\n\nTo reset your password, open Settings.\n");
    await h.publish(Topics.documentsSubmitted, DocumentSubmittedSchema, submitted(bytes), "doc_1");
    const parsed = await h.next(Topics.documentsParsed, DocumentParsedSchema);
    expect(parsed).toMatchObject({ documentId: "doc_1", knowledgeBaseId: "kb_1", version: 7n, fileName: "guide.md" });
    expect(parsed.parsed!.text).toContain("To reset your password");
    expect(parsed.parsed!.sections.map((s) => s.path)).toEqual([["Account"]]);
    const progress = await h.nextProgress((p) => p.phase === DocumentStatus.PARSING);
    expect(progress).toMatchObject({ documentId: "doc_1", percent: 10, version: 7n });
    expect(progress.descriptor).toMatchObject({ fileName: "guide.md", sizeBytes: BigInt(bytes.byteLength), knowledgeBaseId: "kb_1" });
  });

  it("fails a document it cannot parse, with the reason, and publishes nothing for it", async () => {
    await h.publish(Topics.documentsSubmitted, DocumentSubmittedSchema, submitted(Uint8Array.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 0xff]), "tool.exe"), "doc_1");
    const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED);
    expect(failed.error).toMatch(/^parser: .*tool\.exe/);
    expect(failed.error).not.toContain("(retrying)");
    await expect(h.next(Topics.documentsParsed, DocumentParsedSchema, undefined, 300)).rejects.toThrow(/no matching event/);
  });

  it("holds an outside producer's submission to the reading rule: a text-like tool.exe and a lone 0x1a byte fail with the reason", async () => {
    const cases = [
      { fileName: "tool.exe", content: new TextEncoder().encode("MZ this is a stub.\n"), reason: /^parser: tool\.exe: Quarry does not read \.exe files/ },
      { fileName: "sub.txt", content: Uint8Array.of(0x1a), reason: /^parser: sub\.txt is not text.*control codes$/ },
    ];
    for (const [i, c] of cases.entries()) {
      const documentId = `doc_rule_${i}`;
      await h.publish(Topics.documentsSubmitted, DocumentSubmittedSchema, { ...submitted(c.content, c.fileName), documentId }, documentId);
      const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED && p.documentId === documentId);
      expect(failed.error).toMatch(c.reason);
    }
  });

  it("reads a submitted SVG as its words", async () => {
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><title>Tides</title><path d="M0 0 L9 9"/><text>high water at noon</text></svg>');
    await h.publish(Topics.documentsSubmitted, DocumentSubmittedSchema, submitted(svg, "tides.svg"), "doc_1");
    const parsed = await h.next(Topics.documentsParsed, DocumentParsedSchema);
    expect(parsed.parsed!.text).toBe("Tides\nhigh water at noon");
  });

  it("fails a submission to a knowledge base that does not exist, saying so", async () => {
    await h.publish(Topics.documentsSubmitted, DocumentSubmittedSchema, { ...submitted(new TextEncoder().encode("hello")), knowledgeBaseId: "kb_gone" }, "doc_1");
    const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED);
    expect(failed.error).toBe("parser: knowledge base kb_gone does not exist");
  });
});
