// Creating, listing, revoking and checking API keys: the rules around the store (names, roles,
// scopes resolved to knowledge base ids, the secret made here and never kept).
import { newApiKey, sameHash, type ApiKeyRecord, type ApiKeyRole } from "../../../lib/auth/api-key.ts";
import { InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import type { ApiKeyStore } from "./api-key-store.ts";
import type { Catalog } from "../catalog/catalog.ts";

export interface NewApiKey {
  name: string;
  role: ApiKeyRole;
  /** Ids or names; empty for every knowledge base. */
  knowledgeBases: string[];
}

export class ApiKeyRegistry {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly catalog: Pick<Catalog, "getKnowledgeBase">,
  ) {}

  /** The new key's record and the whole key, which nobody can see again. */
  async create(input: NewApiKey): Promise<{ record: ApiKeyRecord; key: string }> {
    const name = input.name.trim();
    if (!name) throw new InvalidInputError("an API key needs a name");
    if (name.length > 200) throw new InvalidInputError("an API key's name is at most 200 characters");
    // An admin manages keys, so a scoped admin could mint itself an unscoped key: scope means nothing there.
    if (input.role === "admin" && input.knowledgeBases.length > 0) {
      throw new InvalidInputError("an admin key cannot be limited to knowledge bases; give a scoped key the editor or reader role");
    }
    const knowledgeBaseIds = [...new Set(await Promise.all(input.knowledgeBases.map(async (kb) => (await this.catalog.getKnowledgeBase(kb)).id)))];
    const { id, key, hash } = newApiKey();
    const record = await this.store.create({ id, name, role: input.role, knowledgeBaseIds, keyHash: hash, createdAt: new Date() });
    return { record, key };
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.store.list();
  }

  revoke(idOrName: string): Promise<ApiKeyRecord> {
    if (!idOrName.trim()) throw new InvalidInputError("name the API key to revoke (its id or name)");
    return this.store.revoke(idOrName.trim());
  }

  /** The key with this id whose stored hash equals keyHash; NotFoundError otherwise. */
  async authenticate(id: string, keyHash: string): Promise<ApiKeyRecord> {
    const found = await this.store.find(id);
    if (!found || !sameHash(found.keyHash, keyHash)) throw new NotFoundError("no such API key");
    const { keyHash: _, ...record } = found;
    return record;
  }
}
