// Dify's request ({knowledge_id, query, retrieval_setting: {top_k, score_threshold},
// metadata_condition}) and response ({records: [{content, score, title, metadata}]}), and its
// error body ({error_code, error_msg}) with the codes Dify documents: 1001 a malformed
// Authorization header, 1002 authorization failed, 2001 the knowledge does not exist. Failures
// Dify has no code for keep their HTTP status and carry it as the error_code.
import type { SearchHit } from "../../../gen/quarry/common/v1/common_pb.ts";
import { ErrorReasons, InvalidInputError } from "../../../lib/errors.ts";
import type { FailureWriter } from "../http-route.ts";
import { sendJson } from "../wire.ts";

export interface DifyRetrieval {
  knowledgeId: string;
  query: string;
  topK: number;
  scoreThreshold: number;
  metadataEquals: Record<string, string>;
}

export function difyRetrieval(body: unknown): DifyRetrieval {
  const given = (body ?? {}) as { knowledge_id?: unknown; query?: unknown; retrieval_setting?: { top_k?: unknown; score_threshold?: unknown }; metadata_condition?: unknown };
  if (typeof given.knowledge_id !== "string" || !given.knowledge_id.trim()) throw new InvalidInputError("knowledge_id is required: a Quarry knowledge base's id or name");
  if (typeof given.query !== "string" || !given.query.trim()) throw new InvalidInputError("query is required");
  const setting = given.retrieval_setting ?? {};
  const topK = setting.top_k ?? 0;
  const threshold = setting.score_threshold ?? 0;
  if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 0) throw new InvalidInputError("retrieval_setting.top_k must be a whole number of records");
  if (typeof threshold !== "number" || threshold < 0 || threshold > 1) throw new InvalidInputError("retrieval_setting.score_threshold must be between 0 and 1");
  return { knowledgeId: given.knowledge_id.trim(), query: given.query, topK, scoreThreshold: threshold, metadataEquals: metadataEquals(given.metadata_condition) };
}

/** Quarry filters by exact metadata values: Dify's `is` conditions joined by `and`. */
function metadataEquals(condition: unknown): Record<string, string> {
  if (condition === undefined || condition === null) return {};
  const { logical_operator: op = "and", conditions = [] } = condition as { logical_operator?: unknown; conditions?: unknown };
  if (op !== "and" || !Array.isArray(conditions)) throw new InvalidInputError('metadata_condition: Quarry matches metadata with "is" conditions joined by "and"');
  const equals: Record<string, string> = {};
  for (const c of conditions as { name?: unknown; comparison_operator?: unknown; value?: unknown }[]) {
    const name = Array.isArray(c.name) && c.name.length === 1 ? c.name[0] : c.name;
    if (c.comparison_operator !== "is" || typeof name !== "string" || typeof c.value !== "string") {
      throw new InvalidInputError(`metadata_condition: only {"name", "comparison_operator": "is", "value": "<text>"} is supported, not ${JSON.stringify(c)}`);
    }
    equals[name] = c.value;
  }
  return equals;
}

export function difyRecords(hits: SearchHit[]) {
  return {
    records: hits.map((hit) => ({
      content: hit.chunk?.text ?? "",
      score: hit.score,
      title: hit.fileName,
      metadata: {
        document_id: hit.chunk?.documentId ?? "",
        chunk_id: hit.chunk?.id ?? "",
        knowledge_base_id: hit.chunk?.knowledgeBaseId ?? "",
        page: hit.chunk?.page ?? 0,
        section_path: [...(hit.chunk?.sectionPath ?? [])],
      },
    })),
  };
}

export const difyFailure: FailureWriter = (res, failure) => {
  if (failure.status === 401) {
    const malformed = failure.reason === ErrorReasons.apiKeyMalformed || failure.reason === ErrorReasons.apiKeyMissing;
    return sendJson(res, 403, { error_code: malformed ? 1001 : 1002, error_msg: malformed ? `Invalid Authorization header format: ${failure.message}` : `Authorization failed: ${failure.message}` });
  }
  if (failure.status === 403) return sendJson(res, 403, { error_code: 1002, error_msg: `Authorization failed: ${failure.message}` });
  if (failure.status === 404) return sendJson(res, 404, { error_code: 2001, error_msg: `The knowledge does not exist: ${failure.message}` });
  return sendJson(res, failure.status, { error_code: failure.status, error_msg: failure.message });
};
