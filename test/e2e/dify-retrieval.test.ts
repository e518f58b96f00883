// Dify's external knowledge API on a Quarry knowledge base, checked against the request, response
// and error bodies Dify documents (test/fixtures/dify): Dify sends the documented request with the
// key as a Bearer token, and reads records (content, score, title, metadata — an object, never
// null), or an error with its documented error_code.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpWorld, type HttpWorld } from "../support/http-world.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/dify/${name}`, import.meta.url), "utf8"));
const documentedRequest = fixture("retrieval-request.json");
const documentedResponse = fixture("retrieval-response.json");
const documentedErrors = fixture("errors.json") as Record<string, { status: number; body: { error_code: number; error_msg: string } }>;

let world: HttpWorld;
beforeAll(async () => {
  world = await startHttpWorld();
}, 180_000);
afterAll(async () => world?.stop());

/** `authorization` null: no header at all. */
async function retrieval(body: unknown, authorization: string | null = `Bearer ${world.keys.reader}`) {
  const res = await fetch(`${world.url}/retrieval`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(authorization === null ? {} : { Authorization: authorization }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

describe("Dify's external knowledge API", () => {
  it("answers the documented request with records shaped as documented, field by field", async () => {
    const { status, body } = await retrieval({ ...documentedRequest, knowledge_id: world.a.name });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(Object.keys(documentedResponse));
    const records = body.records as Record<string, unknown>[];
    expect(records.length).toBeGreaterThan(0);
    expect(records.length).toBeLessThanOrEqual(documentedRequest.retrieval_setting.top_k);
    const example = documentedResponse.records[0] as Record<string, unknown>;
    for (const record of records) {
      for (const [field, value] of Object.entries(example)) expect(typeOf(record[field]), field).toBe(typeOf(value));
      expect(record.score as number).toBeGreaterThanOrEqual(documentedRequest.retrieval_setting.score_threshold);
      expect(record.score as number).toBeLessThanOrEqual(1);
    }
    expect(records[0].content).toMatch(/Expense reports are due on the fifth/);
    expect(records[0].title).toBe("tenant-a-handbook.txt");
    expect(records[0].metadata).toMatchObject({ document_id: world.a.docId, knowledge_base_id: world.a.id });
  });

  it("takes the base's id as well as its name, and returns no records above a threshold nothing reaches", async () => {
    const byId = await retrieval({ ...documentedRequest, knowledge_id: world.a.id });
    expect((byId.body.records as unknown[]).length).toBeGreaterThan(0);
    const none = await retrieval({ ...documentedRequest, knowledge_id: world.a.id, retrieval_setting: { top_k: 5, score_threshold: 0.99 } });
    expect(none).toEqual({ status: 200, body: { records: [] } });
  });

  it("fails with the documented error codes and statuses", async () => {
    const check = (got: { status: number; body: Record<string, unknown> }, name: string) => {
      const doc = documentedErrors[name];
      expect(got.status, name).toBe(doc.status);
      expect(Object.keys(got.body).sort()).toEqual(Object.keys(doc.body).sort());
      expect(got.body.error_code, name).toBe(doc.body.error_code);
      expect(typeof got.body.error_msg).toBe("string");
    };
    check(await retrieval({ ...documentedRequest, knowledge_id: world.a.name }, `Token ${world.keys.reader}`), "invalid_authorization_header");
    check(await retrieval({ ...documentedRequest, knowledge_id: world.a.name }, null), "invalid_authorization_header");
    check(await retrieval({ ...documentedRequest, knowledge_id: world.a.name }, "Bearer qk_not_a_key"), "authorization_failed");
    // A base out of the key's scope reads as missing (gateway/access/scope.ts): Dify's "does not exist".
    check(await retrieval({ ...documentedRequest, knowledge_id: world.b.name }, `Bearer ${world.keys["tenant-a-reader"]}`), "knowledge_does_not_exist");
    check(await retrieval({ ...documentedRequest, knowledge_id: "no-such-base" }), "knowledge_does_not_exist");
    const bad = await retrieval({ knowledge_id: world.a.name, retrieval_setting: { top_k: 2, score_threshold: 0.1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error_msg).toMatch(/query is required/);
  });
});
