// Elasticsearch client failures as domain errors (the mapping itself is shared: engine-errors.ts).
import { errors } from "@elastic/elasticsearch";
import { engineErrors } from "../document-store/engine-errors.ts";

export const elasticsearchErrors = engineErrors("Elasticsearch", errors);
export const { isResponseError, errorType, isIndexNotFound, toDomainError, itemError } = elasticsearchErrors;
