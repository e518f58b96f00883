// The console's files on the gateway's port, over raw HTTP: content types, the single-page
// fallback, 404 for RPC-shaped paths and missing assets, and no way out of the folder.
import http from "node:http";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.ts";
import { buildServer, type RunningServer } from "../../lib/rpc/server.ts";
import { silentLogger } from "../../lib/logger.ts";
import { consoleAssets } from "./console-assets.ts";

let root: string;
let dist: string;
let server: RunningServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "quarry-console-assets-"));
  dist = join(root, "dist");
  await mkdir(join(dist, "assets"), { recursive: true });
  await writeFile(join(dist, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(join(dist, "assets", "app-1.js"), "console.log(1)");
  await writeFile(join(dist, "assets", "app-1.css"), "body{}");
  await writeFile(join(dist, "assets", "font.woff2"), Buffer.from([0x77, 0x4f, 0x46, 0x32]));
  // A file beside the folder that no request may read.
  await writeFile(join(root, "secret.txt"), "not for the browser");
  server = await buildServer({ routes: () => {}, serviceNames: [], files: [], logger: silentLogger, fallback: consoleAssets(dist) }).listen(0);
});

afterAll(async () => {
  await server?.close(0);
  await rm(root, { recursive: true, force: true });
});

/** A request with the path sent exactly as written (fetch would fold the ".." first). */
function raw(path: string, method = "GET"): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: server.port, path, method }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, type: res.headers["content-type"], body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the console's files on the gateway port", () => {
  it("serves index.html at / and the assets with their content types", async () => {
    expect(await raw("/")).toMatchObject({ status: 200, type: "text/html; charset=utf-8", body: expect.stringContaining("<title>console") });
    expect(await raw("/assets/app-1.js")).toMatchObject({ status: 200, type: "text/javascript; charset=utf-8", body: "console.log(1)" });
    expect(await raw("/assets/app-1.css")).toMatchObject({ status: 200, type: "text/css; charset=utf-8" });
    expect(await raw("/assets/font.woff2")).toMatchObject({ status: 200, type: "font/woff2" });
  });

  it("answers a screen's path with index.html, a missing asset with 404", async () => {
    expect(await raw("/kb/handbook")).toMatchObject({ status: 200, body: expect.stringContaining("<title>console") });
    expect(await raw("/retrieval?q=x")).toMatchObject({ status: 200, type: "text/html; charset=utf-8" });
    expect((await raw("/assets/gone-2.js")).status).toBe(404);
  });

  it("never leaves the folder", async () => {
    for (const path of ["/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt", "/..%5csecret.txt", "/%00/index.html"]) {
      const res = await raw(path);
      expect(res.body, path).not.toContain("not for the browser");
      expect([200, 400, 404], path).toContain(res.status);
      // A path that folds back inside the folder is a screen (index.html), never the file beside it.
      if (res.status === 200) expect(res.body, path).toContain("<title>console");
    }
  });

  it("leaves RPC paths to Connect: a real route works, an unknown one is 404, not HTML", async () => {
    const health = createClient(Health, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    await expect(health.check({})).resolves.toBeTruthy();
    const unknown = await raw("/quarry.gateway.v1.QuarryService/NoSuchMethod", "POST");
    expect(unknown.status).toBe(404);
    expect(unknown.type).not.toContain("text/html");
    expect((await raw("/quarry.gateway.v1.QuarryService/NoSuchMethod")).status).toBe(404);
  });

  it("is read-only", async () => {
    expect((await raw("/", "POST")).status).toBe(405);
    expect(await raw("/assets/app-1.js", "HEAD")).toMatchObject({ status: 200, body: "" });
  });

  it("says how to build the console when it is not built", async () => {
    const bare = await buildServer({ routes: () => {}, serviceNames: [], files: [], logger: silentLogger, fallback: consoleAssets(join(root, "nowhere")) }).listen(0);
    try {
      const res = await fetch(`${bare.url}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("npm run build");
    } finally {
      await bare.close(0);
    }
  });
});
