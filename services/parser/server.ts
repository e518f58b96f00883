import { file_quarry_parser_v1_parser, ParserService } from "../../gen/quarry/parser/v1/parser_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import type { RoutingParser } from "./routing-parser.ts";
import { parserRoutes } from "./routes.ts";

export function build(deps: { parser: RoutingParser; logger: Logger; metrics?: Metrics }) {
  return buildServer({
    routes: parserRoutes(deps.parser),
    serviceNames: [ParserService.typeName],
    files: [file_quarry_parser_v1_parser],
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
