// The services as the embedded mode assembles them, in this process, on a fresh data folder: the
// SQLite log itself (so a test can read its tables), the folder blob store, and the
// OpenAI-compatible stub as the embedding model (to count what is embedded).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { assembleInProcess } from "../../app/embedded.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { openBlobStore } from "../../lib/blobs/blob-store-from-config.ts";
import type { BlobStore } from "../../lib/blobs/blob-store.ts";
import { Topics, type EventBus, type Subscription } from "../../lib/bus/event-bus.ts";
import { SqliteEventBus } from "../../lib/bus/sqlite-event-bus.ts";
import { sqlitePath, type Env } from "../../lib/config.ts";
import { silentLogger } from "../../lib/logger.ts";
import { redriveSettings } from "../../lib/pipeline/redrive.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { AssembledService } from "../../lib/service-runtime.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";

export interface InProcessPipeline {
  bus: SqliteEventBus;
  blobs: BlobStore;
  stub: OpenAiStub;
  client: Client<typeof QuarryService>;
  index: Client<typeof IndexService>;
  close(): Promise<void>;
}

/** `extraEnv` adds settings; `busSeenByServices` lets a test change what the services get from the bus. */
export async function startInProcessPipeline(extraEnv: Env = {}, busSeenByServices: (bus: EventBus) => EventBus = (bus) => bus): Promise<InProcessPipeline> {
  const dir = await mkdtemp(join(tmpdir(), "quarry-pipeline-"));
  const stub = await startOpenAiStub({ embeddingDimension: 32 });
  const env: Env = {
    QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
    HOME: process.env.HOME,
    QUARRY_DATA_DIR: dir,
    QUARRY_INSECURE: "1",
    QUARRY_EMBEDDING_PROVIDER: "openai",
    QUARRY_EMBEDDING_BASE_URL: stub.url,
    QUARRY_EMBEDDING_MODEL: "stub-embedding",
    QUARRY_EMBEDDING_DIMENSION: "32",
    ...extraEnv,
  };
  const bus = new SqliteEventBus(sqlitePath(env), { logger: silentLogger });
  await bus.ensureTopics(Object.values(Topics));
  const blobs = await openBlobStore(env);
  const assembled = await assembleInProcess(env, { bus: busSeenByServices(bus), blobs, logger: silentLogger, redrive: redriveSettings(env) });
  const services: AssembledService[] = assembled.services;
  const workers: Subscription[] = [];
  for (const service of services) workers.push(...(await service.startWorkers()));
  return {
    bus,
    blobs,
    stub,
    client: createClient(QuarryService, inProcessTransport(assembled.gateway.server.routes, assembled.gateway.server.interceptors)),
    index: createClient(IndexService, assembled.peers.transport("index")),
    async close() {
      await Promise.all(workers.map((w) => w.close({ graceMs: 0 })));
      for (const service of [...services].reverse()) await service.close();
      await bus.close({ graceMs: 0 });
      await stub.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
