// What a document store's conditional writes do when the engine's client sends them again: after a
// timeout or a dropped connection (a node cut off mid-call) the client retries, the second try finds
// the first's record and the engine answers 409. The write succeeded. The same 409 without a retry is
// another writer's, a real conflict, even when that writer sent the same record (two turns of one
// conversation computing the same next record). Run on each engine (OpenSearch, Elasticsearch)
// through a proxy that drops one answer after the engine has acted on the request.
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DocumentStorePort } from "../document-store/document-store-port.ts";

export interface RetriedWritesSubject {
  /** The engine's own URL. */
  url: string;
  /** A store on a client of its own for `node`, retrying as the services' clients do. */
  storeAt(node: string): { store: DocumentStorePort; close(): Promise<void> };
  /** An index name of the test's own. */
  index: string;
  cleanup(): Promise<void>;
}

/** Forwards every request to the engine; drops the answer of the one `drop` picks, after the engine acted. */
class AnswerDroppingProxy {
  private server!: Server;
  private drop: ((req: IncomingMessage) => boolean) | undefined;
  private beforeDrop: () => Promise<void> = async () => {};
  /** Requests the last armed drop matched, the dropped one included. */
  matched = 0;

  constructor(private readonly upstream: URL) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const matches = this.drop?.(req) ?? false;
      const dropThis = matches && this.matched++ === 0;
      const forwarded = request({ host: this.upstream.hostname, port: this.upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        if (dropThis) {
          answer.resume();
          answer.on("end", () => void this.beforeDrop().finally(() => req.socket.destroy()));
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next request `drop` matches is acted on and its answer lost; `beforeDrop` runs in between. */
  arm(drop: (req: IncomingMessage) => boolean, beforeDrop: () => Promise<void> = async () => {}): void {
    this.drop = drop;
    this.beforeDrop = beforeDrop;
    this.matched = 0;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export function describeRetriedWritesContract(engine: string, open: () => Promise<RetriedWritesSubject>): void {
  describe(`${engine}: a conditional write sent again by the client`, () => {
    let subject: RetriedWritesSubject;
    let proxy: AnswerDroppingProxy;
    let direct: ReturnType<RetriedWritesSubject["storeAt"]>;
    let proxied: ReturnType<RetriedWritesSubject["storeAt"]>;
    beforeAll(async () => {
      subject = await open();
      proxy = new AnswerDroppingProxy(new URL(subject.url));
      proxied = subject.storeAt(await proxy.start());
      direct = subject.storeAt(subject.url);
      await direct.store.createIndex(subject.index, { mappings: { dynamic: "true", properties: {} } });
    });
    afterAll(async () => {
      await proxied?.close();
      await direct?.close();
      await proxy?.close();
      await subject?.cleanup();
    });

    const conflict = (error: unknown) => direct.store.errors.isResponseError(error, 409);
    const outcome = (write: Promise<void>) => write.then(() => "written", (error: unknown) => (conflict(error) ? "409" : String(error)));
    const creates = (req: IncomingMessage) => req.url?.includes("/_create/") ?? false;
    const conditionalPuts = (req: IncomingMessage) => (req.method === "PUT" || req.method === "POST") && (req.url?.includes("if_seq_no=") ?? false);

    it("a create whose answer was lost succeeds, the record written once", async () => {
      const record = { record_type: "conversation", id: "cv_1", title: "日本語 and English", turn_count: 0, created_at: 1_796_316_019_206, tags: ["a", "b"] };
      proxy.arm(creates);
      await proxied.store.create(subject.index, "conversation:cv_1", record);
      expect(proxy.matched, "create requests the proxy saw (the dropped one and the client's retry)").toBe(2);
      expect((await direct.store.get(subject.index, "conversation:cv_1"))?.source).toEqual(record);
    });

    it("a put ifUnchanged whose answer was lost succeeds", async () => {
      await direct.store.create(subject.index, "lease:x", { owner: "a", expires_at: 1 });
      const read = (await direct.store.get<object>(subject.index, "lease:x"))!;
      const renewed = { owner: "a", expires_at: 2 };
      proxy.arm(conditionalPuts);
      await proxied.store.put(subject.index, "lease:x", renewed, { refresh: true, ifUnchanged: read });
      expect(proxy.matched, "conditional puts the proxy saw").toBe(2);
      expect((await direct.store.get<object>(subject.index, "lease:x"))?.source).toEqual(renewed);
    });

    it("a retried create is refused when another writer's record is there", async () => {
      const mine = { record_type: "conversation", id: "cv_2", title: "mine" };
      const theirs = { ...mine, title: "theirs" };
      // Between the engine acting on the first try and the retry, another writer replaces the record.
      proxy.arm(creates, () => direct.store.put(subject.index, "conversation:cv_2", theirs, { refresh: true }));
      expect(await outcome(proxied.store.create(subject.index, "conversation:cv_2", mine))).toBe("409");
      expect((await direct.store.get(subject.index, "conversation:cv_2"))?.source).toEqual(theirs);
    });

    it("without a retry, another writer's identical record is a conflict", async () => {
      const record = { record_type: "conversation", id: "cv_3", turn_count: 1 };
      await direct.store.create(subject.index, "conversation:cv_3", record);
      expect(await outcome(direct.store.create(subject.index, "conversation:cv_3", { ...record }))).toBe("409");
      const read = (await direct.store.get<object>(subject.index, "conversation:cv_3"))!;
      const next = { ...record, turn_count: 2 };
      await direct.store.put(subject.index, "conversation:cv_3", next, { refresh: true, ifUnchanged: read });
      // A second writer that read the same version computes the same next record: still its conflict.
      expect(await outcome(direct.store.put(subject.index, "conversation:cv_3", { ...next }, { refresh: true, ifUnchanged: read }))).toBe("409");
    });
  });
}
