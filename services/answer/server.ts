import type { Client } from "@connectrpc/connect";
import { AnswerService, file_quarry_answer_v1_answer } from "../../gen/quarry/answer/v1/answer_pb.ts";
import type { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import { AnswerApplication, type AnswerApplicationDeps } from "./answer-service.ts";
import { indexConversations } from "./adapters/index-conversations.ts";
import { indexDebugLookups } from "./adapters/index-debug-lookups.ts";
import { IndexRetriever } from "./adapters/index-retriever.ts";
import { answerRoutes } from "./routes.ts";

export interface AnswerServiceDeps extends Omit<AnswerApplicationDeps, "retriever" | "conversations" | "debugLookups"> {
  index: Client<typeof IndexService>;
  embedder: Client<typeof EmbedderService>;
}

/** The application over its Connect peers (the index and the embedder services). */
export function answerApplication(deps: AnswerServiceDeps): AnswerApplication {
  return new AnswerApplication({
    ...deps,
    retriever: new IndexRetriever({ index: deps.index, embedder: deps.embedder }),
    conversations: indexConversations(deps.index),
    debugLookups: indexDebugLookups(deps.index),
  });
}

export function build(deps: AnswerServiceDeps & { logger: Logger; metrics?: Metrics }) {
  return buildServer({
    routes: answerRoutes(answerApplication(deps)),
    serviceNames: [AnswerService.typeName],
    files: [file_quarry_answer_v1_answer],
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
