// A service whose peer is not up yet, over real sockets: it listens at once, says NOT_SERVING on
// its health check, and becomes SERVING when the peer comes up and answers SERVING itself.
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.ts";
import { IndexService, file_quarry_index_v1_index } from "../../gen/quarry/index/v1/index_pb.ts";
import { silentLogger } from "../logger.ts";
import { runService, type AssembledService, type RunningService } from "../service-runtime.ts";
import { retryWhileUnavailable, waitForPeers } from "./peer-readiness.ts";
import { remotePeers } from "./peers.ts";
import { buildServer, type RunningServer } from "./server.ts";
import { freePort } from "../testing/free-port.ts";

const fast = { initialMs: 20, maxMs: 100 };

const indexLike = () => buildServer({ routes: () => {}, serviceNames: [IndexService.typeName], files: [file_quarry_index_v1_index], logger: silentLogger });

async function statusOf(url: string): Promise<Status> {
  return (await createClient(Health, createGrpcTransport({ baseUrl: url })).check({ service: "" })).status;
}

describe("a service started before its peer", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup.length = 0;
  });

  async function startWaiting(peerPort: number, service: Partial<AssembledService> = {}): Promise<RunningService> {
    const peers = remotePeers({ QUARRY_INDEX_PORT: String(peerPort) }, ["index"]);
    const running = await runService(
      { name: "waiter", server: indexLike(), startWorkers: async () => [], close: async () => {}, ...service },
      0,
      "127.0.0.1",
      silentLogger,
      {
        waitForPeers: (signal) => waitForPeers(peers, ["index"], { logger: silentLogger, signal, backoff: fast }),
        retry: (what, attempt, signal) => retryWhileUnavailable(what, attempt, { logger: silentLogger, signal, backoff: fast }),
      },
    );
    cleanup.push(() => running.stop());
    return running;
  }

  it("listens at once, reports NOT_SERVING while the peer is down or not serving, then SERVING", async () => {
    const peerPort = await freePort();
    const prepared: number[] = [];
    const waiting = await startWaiting(peerPort, { prepare: async () => void prepared.push(Date.now()) });
    let ready = false;
    void waiting.ready.then(() => (ready = true));

    await new Promise((r) => setTimeout(r, 300));
    expect(await statusOf(waiting.url)).toBe(Status.NOT_SERVING);
    expect(ready).toBe(false);
    expect(prepared).toEqual([]);

    // The peer is up but itself still waiting: not good enough.
    const peer = indexLike();
    peer.health.setAll(false);
    const listening: RunningServer = await peer.listen(peerPort);
    cleanup.push(() => listening.close(100));
    await new Promise((r) => setTimeout(r, 300));
    expect(await statusOf(waiting.url)).toBe(Status.NOT_SERVING);

    peer.health.setAll(true);
    await waiting.ready;
    expect(await statusOf(waiting.url)).toBe(Status.SERVING);
    expect(prepared).toHaveLength(1);
  });

  it("stops promptly while still waiting, without calling that a start-up failure", async () => {
    const waiting = await startWaiting(await freePort());
    const started = Date.now();
    await waiting.stop();
    await expect(waiting.ready).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("fails start-up for an error waiting cannot cure", async () => {
    const peerPort = await freePort();
    const peer = await indexLike().listen(peerPort);
    cleanup.push(() => peer.close(100));
    const waiting = await startWaiting(peerPort, {
      prepare: async () => {
        throw new Error("the embedder answered nonsense");
      },
    });
    await expect(waiting.ready).rejects.toThrow("the embedder answered nonsense");
  });
});
