import { createClient } from "@connectrpc/connect";
import { AnswerService } from "../gen/quarry/answer/v1/answer_pb.ts";
import { ChunkerService } from "../gen/quarry/chunker/v1/chunker_pb.ts";
import { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { ParserService } from "../gen/quarry/parser/v1/parser_pb.ts";
import type { Env } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { ProgressHub } from "../lib/pipeline/progress-hub.ts";
import type { Peers } from "../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../lib/service-runtime.ts";
import { accessInterceptor } from "./access/access-interceptor.ts";
import { ApiKeyAuthenticator } from "./access/authenticator.ts";
import { checkBindPolicy, isLoopback } from "./access/bind-policy.ts";
import { requestLimitsInterceptor } from "./access/request-limits.ts";
import { gatewayConfig } from "./config.ts";
import { build } from "./server.ts";

export interface AssembledGateway extends AssembledService {
  /** Before listening: refuses to expose a Quarry that has no API key (see access/bind-policy.ts). */
  checkExposure(): Promise<void>;
}

export function assembleGateway(env: Env, peers: Peers, shared: SharedDeps): AssembledGateway {
  const config = gatewayConfig(env);
  const logger = shared.logger.child({ service: "gateway" });
  const hub = new ProgressHub(shared.bus);
  const index = createClient(IndexService, peers.transport("index"));
  const authenticator = new ApiKeyAuthenticator({
    index,
    bootstrapKey: config.apiKey,
    openWithoutKeys: isLoopback(config.host) || config.insecure,
    openOnlyToLoopbackHosts: !config.insecure,
  });
  return {
    checkExposure: () => checkBindPolicy({ host: config.host, insecure: config.insecure, keysConfigured: () => authenticator.keysConfigured(), logger }),
    name: "gateway",
    server: build({
      index,
      chunker: createClient(ChunkerService, peers.transport("chunker")),
      parser: createClient(ParserService, peers.transport("parser")),
      embedder: createClient(EmbedderService, peers.transport("embedder")),
      answer: createClient(AnswerService, peers.transport("answer")),
      bus: shared.bus,
      hub,
      limits: config.limits,
      corsOrigins: config.corsOrigins,
      consoleDir: config.consoleDir,
      // Limits first: the access check looks up each base a request names.
      interceptors: [requestLimitsInterceptor(), accessInterceptor({ authenticator, index })],
      keysChanged: () => authenticator.keysChanged(),
      logger,
    }),
    startWorkers: async () => {
      await hub.start();
      return [{ close: (options) => hub.close(options) }];
    },
    close: async () => {},
  };
}
