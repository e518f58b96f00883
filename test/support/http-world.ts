// A Quarry that needs keys, holding two tenants (a knowledge base with a document each, and an
// assistant over it) and keys of every kind, for the tests of the gateway's plain-HTTP surfaces.
import { randomBytes } from "node:crypto";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "./embedded-quarry.ts";

export interface Tenant {
  id: string;
  name: string;
  docId: string;
  assistant: string;
}

export interface HttpWorld {
  quarry: EmbeddedQuarryFixture;
  url: string;
  admin: QuarryClient;
  a: Tenant;
  b: Tenant;
  /** Secrets by name: bootstrap (admin), reader, editor, admin, tenant-a-reader, tenant-a-editor. */
  keys: Record<string, string>;
  stop(): Promise<void>;
}

export const TENANT_TEXT = (name: string) =>
  `The ${name} handbook. Vacation requests go to the ${name} portal two weeks ahead. ` +
  `The ${name} office opens at nine in the morning and closes at six. Expense reports are due on the fifth of each month.`;

/** `env` adds to the Quarry's environment (a chat model, say). */
export async function startHttpWorld(env: Record<string, string> = {}): Promise<HttpWorld> {
  const bootstrap = `bootstrap-${randomBytes(16).toString("hex")}`;
  const quarry = await startEmbeddedQuarry({ env: { ...env, QUARRY_API_KEY: bootstrap } });
  const admin = gatewayClient(quarry.url, bootstrap);
  const make = async (name: string): Promise<Tenant> => {
    const kb = (await admin.createKnowledgeBase({ name: `${name}-${randomBytes(3).toString("hex")}` })).knowledgeBase!;
    const doc = (await admin.uploadDocument({ header: { knowledgeBase: kb.id, fileName: `${name}-handbook.txt` }, content: new TextEncoder().encode(TENANT_TEXT(name)) })).document!;
    const assistant = (await admin.createAssistant({ assistant: { name: `${name}-assistant-${randomBytes(3).toString("hex")}`, knowledgeBases: [{ knowledgeBase: kb.id }] } })).assistant!.name;
    return { id: kb.id, name: kb.name, docId: doc.id, assistant };
  };
  const a = await make("tenant-a");
  const b = await make("tenant-b");
  for await (const update of admin.watchIngestion({ documentIds: [a.docId, b.docId] }, { signal: AbortSignal.timeout(120_000) })) {
    if (update.status === DocumentStatus.FAILED) throw new Error(`a tenant's document failed: ${update.error}`);
  }
  const keys: Record<string, string> = { bootstrap };
  const create = async (name: string, role: ApiKeyRole, kbs: string[] = []) => {
    keys[name] = (await admin.createApiKey({ name, role, knowledgeBases: kbs })).secret;
  };
  await create("reader", ApiKeyRole.READER);
  await create("editor", ApiKeyRole.EDITOR);
  await create("tenant-a-reader", ApiKeyRole.READER, [a.id]);
  await create("tenant-a-editor", ApiKeyRole.EDITOR, [a.id]);
  await create("admin", ApiKeyRole.ADMIN);
  return { quarry, url: quarry.url, admin, a, b, keys, stop: () => quarry.stop() };
}
