import { AnswerService, file_quarry_answer_v1_answer } from "../../gen/quarry/answer/v1/answer_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import { answerRoutes, type AnswerServiceDeps } from "./routes.ts";

export function build(deps: AnswerServiceDeps & { logger: Logger }) {
  return buildServer({
    routes: answerRoutes(deps),
    serviceNames: [AnswerService.typeName],
    files: [file_quarry_answer_v1_answer],
    logger: deps.logger,
  });
}
