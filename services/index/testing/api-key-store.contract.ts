// The behaviour every ApiKeyStore must show, run against SQLite, OpenSearch and Elasticsearch.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiKey } from "../../../lib/auth/api-key.ts";
import { AlreadyExistsError, NotFoundError } from "../../../lib/errors.ts";
import type { ApiKeyStore, StoredApiKey } from "../keys/api-key-store.ts";

export interface ApiKeyStoreFixture {
  store: ApiKeyStore;
  cleanup(): Promise<void>;
}

function stored(overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  const { id, hash } = newApiKey();
  return { id, keyHash: hash, name: `key-${randomUUID()}`, role: "reader", knowledgeBaseIds: [], createdAt: new Date(Math.floor(Date.now() / 1000) * 1000), ...overrides };
}

export function describeApiKeyStoreContract(name: string, factory: () => Promise<ApiKeyStoreFixture>): void {
  describe(`ApiKeyStore contract: ${name}`, () => {
    let fixture: ApiKeyStoreFixture;
    beforeAll(async () => {
      fixture = await factory();
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it("keeps a key's hash, role and scope, and lists it without the hash", async () => {
      const key = stored({ role: "editor", knowledgeBaseIds: ["kb_a", "kb_b"] });
      const { keyHash, ...record } = key;
      expect(await fixture.store.create(key)).toEqual(record);
      expect(await fixture.store.find(key.id)).toEqual(key);
      const listed = (await fixture.store.list()).find((k) => k.id === key.id);
      expect(listed).toEqual(record);
      expect(Object.keys(listed!)).not.toContain("keyHash");
      expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it("refuses a second key with the same name", async () => {
      const first = stored();
      await fixture.store.create(first);
      await expect(fixture.store.create(stored({ name: first.name }))).rejects.toBeInstanceOf(AlreadyExistsError);
      // The refused key left nothing behind.
      expect((await fixture.store.list()).filter((k) => k.name === first.name)).toHaveLength(1);
    });

    it("revokes by id or by name, after which the key is gone and its name free", async () => {
      const byId = stored();
      const byName = stored();
      await fixture.store.create(byId);
      await fixture.store.create(byName);
      expect((await fixture.store.revoke(byId.id)).name).toBe(byId.name);
      expect((await fixture.store.revoke(byName.name)).id).toBe(byName.id);
      expect(await fixture.store.find(byId.id)).toBeUndefined();
      expect(await fixture.store.find(byName.id)).toBeUndefined();
      const ids = (await fixture.store.list()).map((k) => k.id);
      expect(ids).not.toContain(byId.id);
      expect(ids).not.toContain(byName.id);
      await expect(fixture.store.revoke(byId.id)).rejects.toBeInstanceOf(NotFoundError);
      await fixture.store.create(stored({ name: byName.name }));
    });

    it("finds nothing for an unknown id", async () => {
      expect(await fixture.store.find("0000000000000000")).toBeUndefined();
      await expect(fixture.store.revoke("no-such-key")).rejects.toBeInstanceOf(NotFoundError);
    });
  });
}
