import { EmbedderService, file_quarry_embedder_v1_embedder } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import type { EmbedderPool } from "./embedder-pool.ts";
import { embedderRoutes } from "./routes.ts";

export function build(deps: { models: EmbedderPool; logger: Logger; metrics?: Metrics }) {
  return buildServer({
    routes: embedderRoutes(deps.models),
    serviceNames: [EmbedderService.typeName],
    files: [file_quarry_embedder_v1_embedder],
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
