import { EmbedderService, file_quarry_embedder_v1_embedder } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import type { Embedder } from "./embedder.ts";
import { embedderRoutes } from "./routes.ts";

export function build(deps: { embedder: Embedder; logger: Logger }) {
  return buildServer({
    routes: embedderRoutes(deps.embedder),
    serviceNames: [EmbedderService.typeName],
    files: [file_quarry_embedder_v1_embedder],
    logger: deps.logger,
  });
}
