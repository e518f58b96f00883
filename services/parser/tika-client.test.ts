import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../lib/errors.ts";
import { fixtureBytes, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { DOCX_CONTENT } from "../../test/fixtures/fixture-texts.ts";
import { describeWithEngine } from "../../test/support/engines.ts";
import { TikaClient } from "./tika-client.ts";

const read = async (name: FixtureName) => new Uint8Array(await fixtureBytes(name));

describe("TikaClient errors", () => {
  // A real HTTP server answering the way Tika does when it fails.
  let server: Server;
  let baseUrl: string;
  const seen: { method?: string; url?: string; headers: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ method: request.method, url: request.url, headers: request.headers });
      request.resume();
      const status = Number(request.url?.split("/")[1]) || 200;
      if (request.url?.startsWith("/hang")) return; // never answers
      response.writeHead(status, { "Content-Type": "text/plain" });
      response.end(`org.apache.tika.exception.TikaException: status ${status}\n\tat org.apache.tika.Foo(Foo.java:1)`);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  it("maps 415 to FailedPrecondition and 422 to InvalidInput, with Tika's message", async () => {
    const bytes = new TextEncoder().encode("x");
    await expect(new TikaClient({ baseUrl: `${baseUrl}/415` }).parseToXhtml(bytes, "a.bin")).rejects.toThrow(
      new FailedPreconditionError("Tika cannot read a.bin (unsupported type): org.apache.tika.exception.TikaException: status 415"),
    );
    await expect(new TikaClient({ baseUrl: `${baseUrl}/422` }).parseToXhtml(bytes, "a.pdf")).rejects.toThrow(
      new InvalidInputError("Tika could not parse a.pdf: org.apache.tika.exception.TikaException: status 422"),
    );
    await expect(new TikaClient({ baseUrl: `${baseUrl}/503` }).parseToXhtml(bytes, "a.pdf")).rejects.toThrow(UnavailableError);
  });

  it("sends the file name in ASCII with the UTF-8 name alongside", async () => {
    seen.length = 0;
    await new TikaClient({ baseUrl }).parseToXhtml(new TextEncoder().encode("x"), "规则 (2016).docx").catch(() => {});
    expect(seen[0].method).toBe("PUT");
    expect(seen[0].url).toBe("/tika");
    expect(seen[0].headers["content-disposition"]).toBe(
      `attachment; filename="__ (2016).docx"; filename*=UTF-8''${encodeURIComponent("规则 (2016).docx")}`,
    );
    expect(seen[0].headers["content-type"]).toBe("application/octet-stream");
  });

  it("reports a timeout as Unavailable", async () => {
    const client = new TikaClient({ baseUrl: `${baseUrl}/hang`, timeoutMs: 200 });
    await expect(client.version()).rejects.toThrow(new UnavailableError(`Tika at ${baseUrl}/hang did not answer within 200 ms`));
  });

  it("reports a refused connection as Unavailable, naming the address", async () => {
    // A port that was just free: bind to port 0, note it, close it.
    const probe = createServer().listen(0, "127.0.0.1");
    await once(probe, "listening");
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const client = new TikaClient({ baseUrl: `http://127.0.0.1:${port}` });
    await expect(client.version()).rejects.toThrow(UnavailableError);
    await expect(client.version()).rejects.toThrow(new RegExp(`^Tika at http://127\\.0\\.0\\.1:${port} is unreachable: .*ECONNREFUSED`));
  });
});

describeWithEngine("TIKA_URL", "TikaClient against a real Tika server", (tikaUrl) => {
  const client = new TikaClient({ baseUrl: tikaUrl });

  it("reports its version", async () => {
    expect(await client.version()).toMatch(/^Apache Tika \d+\.\d+/);
  });

  it("detects types from bytes and name", async () => {
    expect(await client.detect(await read("canal-boating.docx"), "canal-boating.docx")).toBe(
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    expect(await client.detect(await read("lighthouses.pdf"), "upload")).toBe("application/pdf");
    expect(await client.detect(await read("harbour-verses.epub"), "upload")).toBe("application/epub+zip");
  });

  it("returns XHTML with one page div per PDF page", async () => {
    const xhtml = await client.parseToXhtml(await read("lighthouses.pdf"), "lighthouses.pdf");
    expect(xhtml.match(/<div class="page">/g)).toHaveLength(5);
    expect(xhtml).toContain('<meta name="Content-Type" content="application/pdf"/>');
  });

  it("returns metadata and text for the container and embedded files via /rmeta/text", async () => {
    const [container] = await client.rmetaText(await read("canal-boating.docx"), "canal-boating.docx");
    expect(container["Content-Type"]).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    expect(String(container["X-TIKA:content"])).toContain(DOCX_CONTENT.steps[0]);
  });

  it("turns a corrupt PDF into InvalidInput", async () => {
    const whole = await read("lighthouses.pdf");
    await expect(client.parseToXhtml(whole.slice(0, 2000), "broken.pdf", "application/pdf")).rejects.toThrow(InvalidInputError);
  });
});
