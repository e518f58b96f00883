import { create } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { AssistantSchema } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { AlreadyExistsError, InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import { assistantSettingsFromProto } from "./assistant-proto.ts";
import { AssistantRegistry } from "./assistant-registry.ts";
import { SqliteAssistantStore } from "../sqlite/sqlite-assistant-store.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

const BASES: Record<string, string> = { manuals: "kb_m", kb_m: "kb_m", forum: "kb_f", kb_f: "kb_f" };
const catalog = {
  getKnowledgeBase: async (idOrName: string) => {
    if (!BASES[idOrName]) throw new NotFoundError(`no knowledge base ${idOrName}`);
    return { id: BASES[idOrName], name: idOrName } as never;
  },
};

describe("AssistantRegistry", () => {
  const { db, cleanup } = openTestDatabase();
  const registry = new AssistantRegistry(new SqliteAssistantStore(db), catalog);
  afterAll(() => cleanup());
  // Settings as a caller's message carries them, through the routes' mapping.
  const assistant = (init: Parameters<typeof create<typeof AssistantSchema>>[1]) => assistantSettingsFromProto(create(AssistantSchema, init));

  it("stores mounted bases by id, with their top-k and priority, and reads the whole assistant back", async () => {
    const made = await registry.create(
      assistant({ name: " keeper ", systemPrompt: "Be brief.", knowledgeBases: [{ knowledgeBase: "manuals", topK: 3, priority: 9 }, { knowledgeBase: "forum" }], hideFileNames: true, retrieval: { topK: 6, rerank: true } }),
    );
    expect(made.id).toMatch(/^as_[0-9a-f]{16}$/);
    expect(made.name).toBe("keeper");
    expect(made.knowledgeBases.map((m) => [m.knowledgeBase, m.topK, m.priority])).toEqual([
      ["kb_m", 3, 9],
      ["kb_f", 0, 0],
    ]);
    expect(await registry.get("keeper")).toEqual(made);
    expect((await registry.get(made.id)).retrieval).toMatchObject({ topK: 6, rerank: true });
    expect((await registry.get(made.id)).hideFileNames).toBe(true);
  });

  it("replaces the whole configuration on update", async () => {
    const made = await registry.create(assistant({ name: "changer", knowledgeBases: [{ knowledgeBase: "manuals" }] }));
    const updated = await registry.update("changer", assistant({ name: "changed", knowledgeBases: [{ knowledgeBase: "kb_f", priority: 2 }] }));
    expect(updated.id).toBe(made.id);
    expect(updated.knowledgeBases.map((m) => m.knowledgeBase)).toEqual(["kb_f"]);
    await expect(registry.get("changer")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("keeps the corrections base Quarry set: a create cannot choose one, an update without one keeps it", async () => {
    const made = await registry.create(assistant({ name: "corrected", knowledgeBases: [{ knowledgeBase: "manuals" }], correctionsKnowledgeBaseId: "kb_f" }));
    expect(made.correctionsKnowledgeBaseId).toBe("");
    const set = await registry.update(made.id, assistant({ name: "corrected", knowledgeBases: [{ knowledgeBase: "manuals" }], correctionsKnowledgeBaseId: "forum" }));
    expect(set.correctionsKnowledgeBaseId).toBe("kb_f");
    const edited = await registry.update(made.id, assistant({ name: "corrected", systemPrompt: "Shorter.", knowledgeBases: [{ knowledgeBase: "manuals" }] }));
    expect(edited.correctionsKnowledgeBaseId).toBe("kb_f");
    expect((await registry.get("corrected")).correctionsKnowledgeBaseId).toBe("kb_f");
    await expect(registry.update(made.id, assistant({ name: "corrected", knowledgeBases: [{ knowledgeBase: "manuals" }], correctionsKnowledgeBaseId: "nowhere" }))).rejects.toBeInstanceOf(NotFoundError);
  });

  it("refuses what cannot work, naming why", async () => {
    await expect(registry.create(assistant({ name: "none" }))).rejects.toThrow(/needs at least one knowledge base/);
    await expect(registry.create(assistant({ name: "", knowledgeBases: [{ knowledgeBase: "manuals" }] }))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(registry.create(assistant({ name: "as_123", knowledgeBases: [{ knowledgeBase: "manuals" }] }))).rejects.toThrow(/may not start with "as_"/);
    await expect(registry.create(assistant({ name: "twice", knowledgeBases: [{ knowledgeBase: "manuals" }, { knowledgeBase: "kb_m" }] }))).rejects.toThrow(/mounted twice/);
    await expect(registry.create(assistant({ name: "huge", knowledgeBases: [{ knowledgeBase: "manuals", topK: 101 }] }))).rejects.toThrow(/at most 100/);
    await expect(registry.create(assistant({ name: "negative", knowledgeBases: [{ knowledgeBase: "manuals" }], retrieval: { minScore: -1 } }))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(registry.create(assistant({ name: "ghost", knowledgeBases: [{ knowledgeBase: "nowhere" }] }))).rejects.toBeInstanceOf(NotFoundError);
    await expect(registry.create(assistant({ name: "keeper", knowledgeBases: [{ knowledgeBase: "manuals" }] }))).rejects.toBeInstanceOf(AlreadyExistsError);
  });
});
