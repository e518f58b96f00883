// OpenSearch client failures as domain errors (the mapping itself is shared: engine-errors.ts).
import { errors } from "@opensearch-project/opensearch";
import { engineErrors } from "../document-store/engine-errors.ts";

export const openSearchErrors = engineErrors("OpenSearch", errors);
export const { isResponseError, errorType, isIndexNotFound, toDomainError, itemError } = openSearchErrors;
