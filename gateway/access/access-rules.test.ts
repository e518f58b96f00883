import { describe, expect, it } from "vitest";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { ACCESS_RULES, ruleFor } from "./access-rules.ts";

describe("ACCESS_RULES", () => {
  it("has exactly one rule per method of the public service", () => {
    expect(Object.keys(ACCESS_RULES).sort()).toEqual(QuarryService.methods.map((m) => m.localName).sort());
    for (const method of QuarryService.methods) expect(ruleFor(method.localName), method.name).toBeDefined();
  });

  it("says for every method that names a knowledge base, document, chunk, assistant, conversation or turn how a scoped key is checked", () => {
    for (const method of QuarryService.methods) {
      const rule = ruleFor(method.localName)!;
      const fields = method.input.fields.map((f) => f.localName);
      const namesTargets = fields.some((f) => /knowledgeBase|documentId|chunkId|assistant|conversationId|turnId|expect|header|part/.test(f));
      if (namesTargets) expect(rule.scoped === "deny" || Boolean(rule.targets), `${method.name} names a base or a document but has no targets`).toBe(true);
      if (rule.scoped === "check") expect(rule.targets, method.name).toBeDefined();
      if (rule.scoped === "filter") expect(rule.filter, method.name).toBeDefined();
    }
  });

  it("gives the roles the issue names: reader reads, editor writes, admin manages keys", () => {
    const role = (m: string) => ruleFor(m)!.role;
    for (const m of ["search", "chat", "listKnowledgeBases", "getKnowledgeBase", "listDocuments", "getDocument", "watchIngestion"]) expect(role(m), m).toBe("reader");
    for (const m of ["uploadDocument", "uploadDocumentStream", "deleteDocument", "setDocumentEnabled", "createKnowledgeBase", "deleteKnowledgeBase"]) expect(role(m), m).toBe("editor");
    for (const m of ["createApiKey", "listApiKeys", "revokeApiKey", "getSystemStatus", "redriveDeadLetters"]) expect(role(m), m).toBe("admin");
  });

  it("lets readers read assistants, conversations and turns, and editors change them", () => {
    const role = (m: string) => ruleFor(m)!.role;
    for (const m of ["getAssistant", "listAssistants", "listConversations", "getConversation", "getTurn"]) expect(role(m), m).toBe("reader");
    for (const m of ["createAssistant", "updateAssistant", "deleteAssistant", "deleteConversation"]) expect(role(m), m).toBe("editor");
  });

  it("makes corrections an unscoped editor's call; listing them follows the assistant's scope", () => {
    expect([ruleFor("correctAnswer"), ruleFor("deleteCorrection")].map((r) => [r!.role, r!.scoped])).toEqual([
      ["editor", "deny"],
      ["editor", "deny"],
    ]);
    expect(ruleFor("listCorrections")!.role).toBe("reader");
    expect(ruleFor("listCorrections")!.targets!({ assistant: "keeper" } as never)).toEqual({ assistants: ["keeper"] });
  });

  it("checks a scoped key against the bases an assistant, a conversation or a turn reaches", () => {
    const targets = (m: string, request: unknown) => ruleFor(m)!.targets!(request as never);
    expect(targets("chat", { knowledgeBases: [], assistant: "helper", conversationId: "" })).toEqual({ knowledgeBases: [], assistants: ["helper"], conversations: [], unbounded: false });
    expect(targets("chat", { knowledgeBases: [], assistant: "", conversationId: "" }).unbounded).toBe(true);
    expect(targets("getTurn", { turnId: "tn_1" })).toEqual({ turns: ["tn_1"] });
    // A chunk is named by its id in GetChunkNeighbours and in DebugRetrieval's expectation: checked as well (issue 23).
    expect(targets("getChunkNeighbours", { documentId: "doc_1", chunkId: "ch_1" })).toEqual({ documents: ["doc_1"], chunks: ["ch_1"] });
    expect(targets("debugRetrieval", { knowledgeBases: ["kb_a"], assistant: "", turnId: "", expect: { chunkId: "ch_2", documentId: "" } }).chunks).toEqual(["ch_2"]);
    expect(targets("updateAssistant", { assistant: "helper", update: { name: "helper", knowledgeBases: [{ knowledgeBase: "kb_x" }] } })).toEqual({
      assistants: ["helper"],
      knowledgeBases: ["kb_x"],
      renames: { kind: "assistants", of: "helper", to: "helper" },
    });
    // A name is claimed only when the request sets one (names are shared by every key).
    expect(targets("updateKnowledgeBase", { knowledgeBase: "kb_a", description: "d" }).renames).toBeUndefined();
    expect(targets("updateKnowledgeBase", { knowledgeBase: "kb_a", name: "b" }).renames).toEqual({ kind: "knowledgeBases", of: "kb_a", to: "b" });
  });
});
