// The public API's key management: relays to the index, which keeps the keys, and tells the
// authenticator to forget what it remembered so a revoked key stops working here at once.
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";

type ApiKeyMethods = Pick<ServiceImpl<typeof QuarryService>, "createApiKey" | "listApiKeys" | "revokeApiKey">;

export function apiKeyHandlers(index: Client<typeof IndexService>, keysChanged: () => void): ApiKeyMethods {
  return {
    async createApiKey(request) {
      const res = await index.createApiKey({ name: request.name, role: request.role, knowledgeBases: request.knowledgeBases });
      keysChanged();
      return { apiKey: res.apiKey, secret: res.secret };
    },
    async listApiKeys() {
      return { apiKeys: (await index.listApiKeys({})).apiKeys };
    },
    async revokeApiKey(request) {
      await index.revokeApiKey({ apiKey: request.apiKey });
      keysChanged();
      return {};
    },
  };
}
