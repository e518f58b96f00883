import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ApiKeyRole, ApiKeySchema } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { hashApiKey, newApiKey } from "../../lib/auth/api-key.ts";
import { UnauthenticatedError } from "../../lib/errors.ts";
import { ApiKeyAuthenticator, type AuthenticatorOptions } from "./authenticator.ts";
import { BOOTSTRAP, OPEN_ACCESS } from "./principal.ts";

// An index that knows the given keys, counting its calls, as the real IndexService answers.
function indexWith(keys: { id: string; key: string; name: string }[]) {
  const calls = { authenticate: 0, list: 0 };
  const index: AuthenticatorOptions["index"] = {
    async authenticateApiKey(request) {
      calls.authenticate++;
      const found = keys.find((k) => k.id === request.keyId && hashApiKey(k.key) === Buffer.from(request.keyHash!).toString("hex"));
      if (!found) throw new ConnectError("no such API key", Code.NotFound);
      return { $typeName: "quarry.index.v1.AuthenticateApiKeyResponse", apiKey: create(ApiKeySchema, { id: found.id, name: found.name, role: ApiKeyRole.EDITOR, knowledgeBaseIds: ["kb_1"] }) };
    },
    async listApiKeys() {
      calls.list++;
      return { $typeName: "quarry.index.v1.ListApiKeysResponse", apiKeys: keys.map((k) => create(ApiKeySchema, { id: k.id, name: k.name, role: ApiKeyRole.EDITOR })) };
    },
  };
  return { index, calls };
}

describe("ApiKeyAuthenticator", () => {
  it("lets calls without credentials through only while no key exists and the server is loopback-only", async () => {
    const keys: { id: string; key: string; name: string }[] = [];
    let now = 0;
    const { index } = indexWith(keys);
    const open = new ApiKeyAuthenticator({ index, openWithoutKeys: true, now: () => now });
    expect(await open.authenticate(null)).toBe(OPEN_ACCESS);
    await expect(new ApiKeyAuthenticator({ index, openWithoutKeys: false }).authenticate(null)).rejects.toBeInstanceOf(UnauthenticatedError);
    const { id, key } = newApiKey();
    keys.push({ id, key, name: "first" });
    open.keysChanged();
    await expect(open.authenticate(null)).rejects.toThrow(/needs an API key/);
    keys.pop();
    now += 10_000;
    expect(await open.authenticate(null)).toBe(OPEN_ACCESS);
  });

  it("serves calls without credentials only when they name a loopback host (no DNS rebinding), unless told otherwise", async () => {
    const { index } = indexWith([]);
    const guarded = new ApiKeyAuthenticator({ index, openWithoutKeys: true, openOnlyToLoopbackHosts: true });
    for (const host of ["127.0.0.1", "localhost", "[::1]"]) expect(await guarded.authenticate(null, host), host).toBe(OPEN_ACCESS);
    await expect(guarded.authenticate(null, "attacker.example")).rejects.toThrow(/only requests addressed to localhost, not to attacker\.example/);
    expect(await new ApiKeyAuthenticator({ index, openWithoutKeys: true, openOnlyToLoopbackHosts: false }).authenticate(null, "quarry.internal")).toBe(OPEN_ACCESS);
  });

  it("takes the bootstrap key without asking the index, and a stored key once per cache period", async () => {
    const { id, key } = newApiKey();
    const { index, calls } = indexWith([{ id, key, name: "ci" }]);
    let now = 0;
    const auth = new ApiKeyAuthenticator({ index, bootstrapKey: "s3cret-bootstrap", openWithoutKeys: true, cacheMs: 1_000, now: () => now });
    // A bootstrap key means keys exist: no open access even on loopback.
    await expect(auth.authenticate(null)).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(await auth.authenticate("Bearer s3cret-bootstrap")).toBe(BOOTSTRAP);
    await expect(auth.authenticate("Bearer s3cret-bootstrap2")).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(await auth.authenticate(`Bearer ${key}`)).toEqual({ name: "ci", role: "editor", knowledgeBaseIds: ["kb_1"] });
    await auth.authenticate(`bearer ${key}`);
    expect(calls.authenticate).toBe(1);
    now += 1_001;
    await auth.authenticate(`Bearer ${key}`);
    expect(calls.authenticate).toBe(2);
    expect(calls.list).toBe(0);
  });

  it("refuses unknown, malformed and non-bearer credentials as unauthenticated", async () => {
    const { id, key } = newApiKey();
    const { index } = indexWith([{ id, key, name: "k" }]);
    const auth = new ApiKeyAuthenticator({ index, openWithoutKeys: true });
    const other = newApiKey().key;
    // A 32-byte key's last base64url character is one of 16, "A" among them: change it to another.
    const tampered = `${key.slice(0, -1)}${key.endsWith("A") ? "E" : "A"}`;
    for (const header of [`Bearer ${other}`, `Bearer ${tampered}`, "Bearer nonsense", `Basic ${key}`, "Bearer"]) {
      await expect(auth.authenticate(header), header).rejects.toBeInstanceOf(UnauthenticatedError);
    }
  });
});
