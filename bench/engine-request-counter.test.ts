import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestKind, startEngineRequestCounter, type EngineRequestCounter } from "./engine-request-counter.ts";

describe("requestKind", () => {
  it("names the method, the index family, the API and the refresh asked for", () => {
    expect(requestKind("PUT", "/bench-1a-catalog/_doc/document%3Adoc_1?refresh=true&if_seq_no=3")).toBe("PUT catalog _doc refresh=true");
    expect(requestKind("GET", "/bench-1a-chunks-kb_x/_doc/__document__%3Adoc_1")).toBe("GET chunks _doc");
    expect(requestKind("POST", "/_bulk?refresh=wait_for&require_alias=true")).toBe("POST _bulk refresh=wait_for");
    expect(requestKind("POST", "/bench-1a-chunks-kb_x/_delete_by_query?conflicts=proceed")).toBe("POST chunks _delete_by_query");
    expect(requestKind("PUT", "/bench-1a-api-keys")).toBe("PUT other (index)");
  });
});

describe("startEngineRequestCounter", () => {
  let upstream: ReturnType<typeof createServer>;
  let counter: EngineRequestCounter;
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      res.writeHead(req.url?.startsWith("/missing") ? 404 : 200, { "content-type": "application/json" });
      req.on("data", () => {});
      req.on("end", () => res.end(JSON.stringify({ path: req.url })));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    counter = await startEngineRequestCounter(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await counter.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it("passes requests and answers through unchanged and counts them by kind until reset", async () => {
    const answer = await fetch(`${counter.url}/x-catalog/_doc/1?refresh=true`, { method: "PUT", body: "{}" });
    expect(await answer.json()).toEqual({ path: "/x-catalog/_doc/1?refresh=true" });
    expect((await fetch(`${counter.url}/missing-catalog/_doc/2`)).status).toBe(404);
    await fetch(`${counter.url}/x-catalog/_doc/3?refresh=true`, { method: "PUT", body: "{}" });
    const counts = counter.counts();
    expect(counts.get("PUT catalog _doc refresh=true")?.count).toBe(2);
    expect(counts.get("GET catalog _doc")?.count).toBe(1);
    counter.reset();
    expect(counter.counts().size).toBe(0);
  });
});
