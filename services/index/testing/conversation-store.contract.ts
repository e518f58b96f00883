// The behaviour every AssistantStore and ConversationStore must show, run against SQLite,
// OpenSearch and Elasticsearch.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AlreadyExistsError, NotFoundError } from "../../../lib/errors.ts";
import type { AssistantStore, StoredAssistant } from "../assistants/assistant-store.ts";
import type { ConversationStore, StoredConversation } from "../conversations/conversation-store.ts";

export interface RecordStoresFixture {
  assistants: AssistantStore;
  conversations: ConversationStore;
  cleanup(): Promise<void>;
}

// Whole seconds apart from one fixed start, so every backend sorts them the same way and a test
// that crosses a second boundary still compares equal times.
const START = Math.floor(Date.now() / 1000) * 1000;
const at = (seconds: number) => new Date(START + seconds * 1000);

function assistant(overrides: Partial<StoredAssistant> = {}): StoredAssistant {
  return {
    id: `as_${randomUUID().replaceAll("-", "").slice(0, 16)}`,
    name: `assistant-${randomUUID()}`,
    createdAt: at(0),
    updatedAt: at(0),
    config: { systemPrompt: "Answer briefly.", knowledgeBases: [{ knowledgeBase: "kb_a", topK: 3, priority: 2 }], hideFileNames: true },
    ...overrides,
  };
}

function conversation(overrides: Partial<Omit<StoredConversation, "turnCount">> = {}): Omit<StoredConversation, "turnCount"> {
  return { id: `cv_${randomUUID().replaceAll("-", "").slice(0, 16)}`, title: "What is a lighthouse?", assistantId: "", knowledgeBaseIds: ["kb_a", "kb_b"], createdAt: at(0), updatedAt: at(0), ...overrides };
}

const turnId = () => `tn_${randomUUID().replaceAll("-", "").slice(0, 16)}`;

export function describeRecordStoresContract(name: string, factory: () => Promise<RecordStoresFixture>): void {
  describe(`AssistantStore and ConversationStore contract: ${name}`, () => {
    let fixture: RecordStoresFixture;
    beforeAll(async () => {
      fixture = await factory();
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it("keeps an assistant's configuration as given and finds it by id or name", async () => {
      const a = assistant();
      expect(await fixture.assistants.create(a)).toEqual(a);
      expect(await fixture.assistants.get(a.id)).toEqual(a);
      expect(await fixture.assistants.get(a.name)).toEqual(a);
      expect((await fixture.assistants.list()).find((x) => x.id === a.id)).toEqual(a);
    });

    it("refuses a second assistant with a taken name, leaving nothing behind", async () => {
      const first = await fixture.assistants.create(assistant());
      const second = assistant({ name: first.name });
      await expect(fixture.assistants.create(second)).rejects.toBeInstanceOf(AlreadyExistsError);
      await expect(fixture.assistants.get(second.id)).rejects.toBeInstanceOf(NotFoundError);
      expect((await fixture.assistants.list()).filter((x) => x.name === first.name)).toHaveLength(1);
    });

    it("updates an assistant, renaming it frees the old name and refuses a taken one", async () => {
      const a = await fixture.assistants.create(assistant());
      const other = await fixture.assistants.create(assistant());
      const renamed = `renamed-${randomUUID()}`;
      const updated = await fixture.assistants.update(a.id, { name: renamed, config: { systemPrompt: "Be exact." }, updatedAt: at(5) });
      expect(updated).toEqual({ ...a, name: renamed, config: { systemPrompt: "Be exact." }, updatedAt: at(5) });
      expect(await fixture.assistants.get(renamed)).toEqual(updated);
      await expect(fixture.assistants.get(a.name)).rejects.toBeInstanceOf(NotFoundError);
      await fixture.assistants.create(assistant({ name: a.name }));
      await expect(fixture.assistants.update(a.id, { name: other.name, config: {}, updatedAt: at(6) })).rejects.toBeInstanceOf(AlreadyExistsError);
      expect((await fixture.assistants.get(a.id)).name).toBe(renamed);
      await expect(fixture.assistants.update("as_missing", { name: "x", config: {}, updatedAt: at(6) })).rejects.toBeInstanceOf(NotFoundError);
    });

    it("deletes an assistant by id or name", async () => {
      const byId = await fixture.assistants.create(assistant());
      const byName = await fixture.assistants.create(assistant());
      expect((await fixture.assistants.delete(byId.id)).name).toBe(byId.name);
      expect((await fixture.assistants.delete(byName.name)).id).toBe(byName.id);
      await expect(fixture.assistants.get(byId.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fixture.assistants.delete(byName.id)).rejects.toBeInstanceOf(NotFoundError);
      const ids = (await fixture.assistants.list()).map((x) => x.id);
      expect(ids).not.toContain(byId.id);
      await fixture.assistants.create(assistant({ name: byName.name }));
    });

    it("keeps a conversation and lists the most recently updated first, by assistant", async () => {
      const older = await fixture.conversations.create(conversation({ assistantId: "as_lister", createdAt: at(-20), updatedAt: at(-20) }));
      const newer = await fixture.conversations.create(conversation({ assistantId: "as_lister", createdAt: at(-10), updatedAt: at(-10) }));
      const elsewhere = await fixture.conversations.create(conversation({ assistantId: "" }));
      expect(older.turnCount).toBe(0);
      expect(await fixture.conversations.get(older.id)).toEqual(older);
      expect((await fixture.conversations.list({ assistantId: "as_lister" })).map((c) => c.id)).toEqual([newer.id, older.id]);
      const all = (await fixture.conversations.list()).map((c) => c.id);
      expect(all).toEqual(expect.arrayContaining([older.id, newer.id, elsewhere.id]));
      // A turn moves its conversation to the top.
      await fixture.conversations.appendTurn({ id: turnId(), conversationId: older.id, createdAt: at(1), body: {} });
      expect((await fixture.conversations.list({ assistantId: "as_lister" })).map((c) => c.id)).toEqual([older.id, newer.id]);
    });

    it("numbers turns in order, keeps their documents as given, and finds each by id", async () => {
      const c = await fixture.conversations.create(conversation());
      const body = { question: "Who built it?", provenance: { retrievalQuery: "Who built the lighthouse?", lists: [{ hits: [{ rank: 1, score: 0.5 }] }] } };
      const first = await fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(1), body });
      const second = await fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(2), body: { question: "And when?" } });
      expect([first.number, second.number]).toEqual([1, 2]);
      expect(await fixture.conversations.getTurn(first.id)).toEqual(first);
      expect(first.body).toEqual(body);
      expect((await fixture.conversations.turns(c.id)).map((t) => t.id)).toEqual([first.id, second.id]);
      const third = await fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(2), body: {} });
      expect((await fixture.conversations.turns(c.id, { last: 2 })).map((t) => t.id)).toEqual([second.id, third.id]);
      expect((await fixture.conversations.turns(c.id, { last: 5 })).map((t) => t.number)).toEqual([1, 2, 3]);
      const after = await fixture.conversations.get(c.id);
      expect(after.turnCount).toBe(3);
      expect(after.updatedAt).toEqual(at(2));
    });

    it("numbers concurrent turns without gaps or repeats", async () => {
      const c = await fixture.conversations.create(conversation());
      const turns = await Promise.all([1, 2, 3, 4].map((i) => fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(i), body: {} })));
      expect(turns.map((t) => t.number).sort()).toEqual([1, 2, 3, 4]);
      expect((await fixture.conversations.get(c.id)).turnCount).toBe(4);
    });

    it("deletes a conversation with its turns; unknown ids are NotFound", async () => {
      const c = await fixture.conversations.create(conversation());
      const t = await fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(1), body: {} });
      await fixture.conversations.delete(c.id);
      await expect(fixture.conversations.get(c.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fixture.conversations.getTurn(t.id)).rejects.toBeInstanceOf(NotFoundError);
      expect(await fixture.conversations.turns(c.id)).toEqual([]);
      await expect(fixture.conversations.delete(c.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fixture.conversations.appendTurn({ id: turnId(), conversationId: c.id, createdAt: at(2), body: {} })).rejects.toBeInstanceOf(NotFoundError);
      await expect(fixture.conversations.getTurn("tn_missing")).rejects.toBeInstanceOf(NotFoundError);
    });
  });
}
