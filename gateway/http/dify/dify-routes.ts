// Dify's external knowledge API (docs.dify.ai, "External Knowledge API"): Dify posts to
// <endpoint>/retrieval with the key it was given as a Bearer token, and a Quarry knowledge base
// answers as its external knowledge. knowledge_id is the base's id or name.
import { RetrievalMode } from "../../../gen/quarry/common/v1/common_pb.ts";
import type { GuardedRoute } from "../http-route.ts";
import { difyFailure, difyRecords, difyRetrieval } from "./dify-shapes.ts";
import { sendJson } from "../wire.ts";

export function difyRoutes(): GuardedRoute[] {
  return [
    {
      name: "dify.retrieval",
      methods: ["POST"],
      path: "/retrieval",
      role: "reader",
      scope: { kind: "check", targets: (input) => ({ knowledgeBases: [difyRetrieval(input.body).knowledgeId] }) },
      body: "json",
      fail: difyFailure,
      async handle(call) {
        const request = difyRetrieval(call.body);
        // Vector search: its score is a cosine in [0, 1], the scale Dify's score_threshold is on
        // (a hybrid search's fused rank score is not).
        const { hits } = await call.gateway.search(
          {
            query: request.query,
            knowledgeBases: [request.knowledgeId],
            settings: { mode: RetrievalMode.VECTOR, topK: request.topK, minScore: request.scoreThreshold, metadataEquals: request.metadataEquals },
          },
          { signal: call.signal },
        );
        sendJson(call.res, 200, difyRecords(hits));
      },
    },
  ];
}
