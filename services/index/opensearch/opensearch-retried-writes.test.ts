// The cluster fault run's failure, reproduced on one node: a create whose answer is lost after the
// record was written (a node cut off mid-call) is sent again by the OpenSearch client, and the second
// try's 409 must not fail the write (a chat turn died of "version conflict, document already exists").
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@opensearch-project/opensearch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRetriedWritesContract } from "../testing/retried-writes.contract.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearch writes sent again by the client", (url) => {
  describeRetriedWritesContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return { store: new OpenSearchDocumentStore(space.client), index: `${space.prefix}records`, cleanup: () => space.cleanup() };
  });

  describe("through a connection that drops the first create's answer", () => {
    const space = openSearchTestSpace(url);
    const upstream = new URL(url);
    let proxy: Server;
    let creates = 0;
    let client: Client;

    beforeAll(async () => {
      // Forwards every request; the first _create's answer is read from OpenSearch and then, instead
      // of being passed on, its connection is dropped: the record is written, the client never hears.
      proxy = createServer((req, res) => {
        const dropAnswer = req.url?.includes("/_create/") && creates++ === 0;
        const forwarded = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          if (dropAnswer) {
            answer.resume();
            answer.on("end", () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(forwarded);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      client = new Client({ node: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, maxRetries: 3 });
    });
    afterAll(async () => {
      await client?.close();
      await new Promise((resolve) => proxy?.close(resolve));
      await space.cleanup();
    });

    it("succeeds, the record written once", async () => {
      const store = new OpenSearchDocumentStore(client);
      const index = `${space.prefix}dropped`;
      await store.createIndex(index, { mappings: { dynamic: "true", properties: {} } });
      const record = { record_type: "conversation", id: "cv_2", title: "lost answer", turn_count: 0 };
      await store.create(index, "conversation:cv_2", record);
      expect(creates, "create requests the proxy saw (the dropped one and the client's retry)").toBe(2);
      expect((await store.get(index, "conversation:cv_2"))?.source).toEqual(record);
    });
  });
});
