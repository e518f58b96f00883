// The index's API key RPCs: protobuf ↔ ApiKeyRegistry.
import type { ServiceImpl } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { apiKeyToProto, roleFromProto } from "../../../lib/auth/api-key-convert.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ApiKeyRegistry } from "./api-key-registry.ts";

type ApiKeyMethods = Pick<ServiceImpl<typeof IndexService>, "createApiKey" | "listApiKeys" | "revokeApiKey" | "authenticateApiKey">;

export function apiKeyHandlers(keys: ApiKeyRegistry): ApiKeyMethods {
  return {
    async createApiKey(request) {
      const { record, key } = await keys.create({ name: request.name, role: roleFromProto(request.role), knowledgeBases: [...request.knowledgeBases] });
      return { apiKey: apiKeyToProto(record), secret: key };
    },
    async listApiKeys() {
      return { apiKeys: (await keys.list()).map(apiKeyToProto) };
    },
    async revokeApiKey(request) {
      await keys.revoke(request.apiKey);
      return {};
    },
    async authenticateApiKey(request) {
      if (!request.keyId || request.keyHash.byteLength !== 32) throw new InvalidInputError("authenticate needs a key id and a 32-byte SHA-256");
      return { apiKey: apiKeyToProto(await keys.authenticate(request.keyId, Buffer.from(request.keyHash).toString("hex"))) };
    },
  };
}
