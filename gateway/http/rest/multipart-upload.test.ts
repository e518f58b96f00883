// A multipart upload read from a real HTTP request, as curl -F sends it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readUpload } from "./multipart-upload.ts";

const LIMIT = 1024;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    readUpload(req, LIMIT).then(
      (u) => res.end(JSON.stringify({ ...u, content: new TextDecoder().decode(u.content) })),
      (e: Error) => res.writeHead(400).end(JSON.stringify({ error: e.constructor.name, message: e.message })),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const form = (fields: Record<string, string | Blob>, fileName = "notes.txt") => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) (v instanceof Blob ? f.set(k, v, fileName) : f.set(k, v));
  return f;
};
const post = async (body: BodyInit, headers: Record<string, string> = {}) => (await fetch(url, { method: "POST", body, headers })).json() as Promise<Record<string, unknown>>;

describe("readUpload", () => {
  it("reads the file, its name and type, and the optional metadata", async () => {
    const got = await post(form({ file: new Blob(["hello"], { type: "text/plain" }), metadata: '{"team":"ops"}' }));
    expect(got).toEqual({ fileName: "notes.txt", mimeType: "text/plain", metadata: { team: "ops" }, content: "hello" });
  });

  it("refuses a file over the limit, a form without a file, bad metadata and a body that is not a form", async () => {
    expect(await post(form({ file: new Blob(["x".repeat(LIMIT * 100)]) }))).toMatchObject({ error: "TooLargeError", message: expect.stringMatching(/larger than 1024 bytes/) });
    expect(await post(form({ other: "x" }))).toMatchObject({ error: "InvalidInputError", message: expect.stringMatching(/"file" field/) });
    expect(await post(form({ file: new Blob(["x"]), metadata: '{"n": 1}' }))).toMatchObject({ message: expect.stringMatching(/JSON object of strings/) });
    expect(await post("{}", { "Content-Type": "application/json" })).toMatchObject({ message: expect.stringMatching(/multipart\/form-data/) });
  });
});
