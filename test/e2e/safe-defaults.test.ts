// What a Quarry without keys does, and what it refuses: it serves without credentials only on a
// loopback address (until the first key is made), `quarry serve --host 0.0.0.0` without a key
// refuses to start unless --insecure, the CLI manages keys and sends them, and browsers from
// origins nobody listed get no CORS headers.
import { execFile, spawn } from "node:child_process";
import { request } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../../client/gateway-client.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");
/** The CLI's environment: nothing of the developer's, least of all a QUARRY_API_KEY. */
const cliEnv = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH!, HOME: process.env.HOME!, ...(process.env.QUARRY_MODELS_DIR ? { QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR } : {}), ...extra });

function quarryCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000, env: cliEnv(env) }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function codeOf(call: () => Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call();
    return "ok";
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

describe("a Quarry with no key", () => {
  let quarry: EmbeddedQuarryFixture;
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
  }, 60_000);
  afterAll(() => quarry?.stop());

  it("serves without credentials on loopback until the first key exists, then asks for one", async () => {
    const anonymous = gatewayClient(quarry.url, "");
    expect(await codeOf(() => anonymous.listKnowledgeBases({}))).toBe("ok");
    const { secret } = await anonymous.createApiKey({ name: "first-admin", role: ApiKeyRole.ADMIN });
    expect(secret).toMatch(/^qk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(await codeOf(() => anonymous.listKnowledgeBases({}))).toBe(Code.Unauthenticated);
    const admin = gatewayClient(quarry.url, secret);
    expect(await codeOf(() => admin.listKnowledgeBases({}))).toBe("ok");
    // Revoking the last key returns the loopback server to the laptop experience.
    await admin.revokeApiKey({ apiKey: "first-admin" });
    expect(await codeOf(() => anonymous.listKnowledgeBases({}))).toBe("ok");
  });

  it("manages keys from the CLI: create prints the secret once, list and revoke take it with --api-key", async () => {
    const created = await quarryCli(["keys", "create", "--name", "cli-admin", "--role", "admin", "--url", quarry.url]);
    expect(created.code, created.stderr).toBe(0);
    const adminKey = created.stdout.trim().split("\n").at(-1)!;
    expect(adminKey).toMatch(/^qk_/);
    expect(created.stderr).toMatch(/Store the key now/);
    const kb = await quarryCli(["kb", "create", "cli-scope", "--url", quarry.url, "--api-key", adminKey]);
    expect(kb.code, kb.stderr).toBe(0);
    const reader = await quarryCli(["keys", "create", "--name", "cli-reader", "--role", "reader", "--kb", "cli-scope", "--url", quarry.url], { QUARRY_API_KEY: adminKey });
    expect(reader.code, reader.stderr).toBe(0);
    expect(reader.stdout).toMatch(/\tcli-reader\treader\tkb_[0-9a-f]+\t/);
    const readerKey = reader.stdout.trim().split("\n").at(-1)!;

    const listed = await quarryCli(["keys", "list", "--url", quarry.url, "--api-key", adminKey]);
    expect(listed.stdout).toMatch(/\tcli-admin\tadmin\tall knowledge bases\t/);
    expect(listed.stdout).not.toContain(readerKey.slice(20));
    const denied = await quarryCli(["keys", "list", "--url", quarry.url, "--api-key", readerKey]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^quarry: .*needs admin \(permission_denied\)$/m);
    const missing = await quarryCli(["kb", "list", "--url", quarry.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\(unauthenticated\)$/m);
    const scoped = await quarryCli(["kb", "list", "--url", quarry.url, "--api-key", readerKey]);
    // kb list prints a header row, then one row per knowledge base, its name first.
    expect(scoped.stdout.trim().split("\n").slice(1).map((l) => l.split(/\s+/)[0])).toEqual(["cli-scope"]);

    const revoked = await quarryCli(["keys", "revoke", "cli-reader", "--url", quarry.url, "--api-key", adminKey]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await quarryCli(["kb", "list", "--url", quarry.url, "--api-key", readerKey])).stderr).toMatch(/\(unauthenticated\)$/m);
    await quarryCli(["keys", "revoke", "cli-admin", "--url", quarry.url, "--api-key", adminKey]);
  }, 120_000);

  it("refuses credential-less calls addressed to another host name, as a DNS-rebinding page's would be", async () => {
    const post = (host: string) =>
      new Promise<number>((done, fail) => {
        const req = request(`${quarry.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, {
          method: "POST",
          headers: { Host: host, "Content-Type": "application/json" },
        }, (res) => {
          res.resume();
          done(res.statusCode!);
        });
        req.once("error", fail);
        req.end("{}");
      });
    const port = new URL(quarry.url).port;
    expect(await post(`rebound.attacker.example:${port}`)).toBe(401);
    expect(await post(`localhost:${port}`)).toBe(200);
  });

  it("answers no browser origin by default: a preflight gets no allow-origin header", async () => {
    const res = await fetch(`${quarry.url}/quarry.gateway.v1.QuarryService/DeleteKnowledgeBase`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
    });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const post = await fetch(`${quarry.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "Content-Type": "application/json" },
      body: "{}",
    });
    expect(post.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS with QUARRY_CORS_ORIGINS", () => {
  let quarry: EmbeddedQuarryFixture;
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry({ env: { QUARRY_CORS_ORIGINS: "https://console.example, http://localhost:5173" } });
  }, 60_000);
  afterAll(() => quarry?.stop());

  it("gives a listed origin the Connect headers it needs, with authorization, and an unlisted one nothing", async () => {
    const preflight = (origin: string) =>
      fetch(`${quarry.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, connect-protocol-version" },
      });
    const listed = await preflight("http://localhost:5173");
    expect(listed.status).toBe(204);
    expect(listed.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(listed.headers.get("vary")).toMatch(/origin/i);
    const allowed = listed.headers.get("access-control-allow-headers")!.toLowerCase();
    for (const h of ["authorization", "content-type", "connect-protocol-version", "grpc-timeout", "x-grpc-web"]) expect(allowed).toContain(h);
    expect(listed.headers.get("access-control-allow-methods")).toMatch(/POST/);
    expect(listed.headers.get("access-control-expose-headers")!.toLowerCase()).toContain("grpc-status");
    const unlisted = await preflight("https://console.example.evil");
    expect(unlisted.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("quarry serve on a non-loopback address", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "quarry-bind-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("refuses to start without a key, in one plain line and exit code 1", async () => {
    const run = await quarryCli(["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", dataDir]);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(/listening/);
    expect(run.stderr.trim().split("\n").at(-1)).toMatch(/^quarry: refusing to serve on 0\.0\.0\.0 without an API key: set QUARRY_API_KEY .* or pass --insecure$/);
  }, 120_000);

  for (const [what, args, env] of [
    ["with --insecure", ["--insecure"], {}],
    ["with QUARRY_API_KEY", [], { QUARRY_API_KEY: "a-bootstrap-key-for-this-test" }],
  ] as const) {
    it(`starts ${what}`, async () => {
      const child = spawn(process.execPath, [BIN, "serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", dataDir, ...args], { env: cliEnv(env), stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      const listening = await new Promise<boolean>((done) => {
        const timer = setTimeout(() => done(false), 90_000);
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (/listening on http:\/\/0\.0\.0\.0:\d+/.test(out)) {
            clearTimeout(timer);
            done(true);
          }
        });
        child.once("exit", () => done(false));
      });
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
      expect(listening, out).toBe(true);
    }, 120_000);
  }
});
