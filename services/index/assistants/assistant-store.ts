// Where assistants are kept: beside the catalog, in the same backend (the index's SQLite file, or
// <prefix>-assistants on the search engine). The store knows an assistant's id, its unique name and
// its times; the rest of its configuration is a JSON document the store keeps as given
// (assistant-registry.ts validates it, assistant-proto.ts writes and reads it). Implementations run
// testing/conversation-store.contract.ts.
import type { JsonObject } from "../../../lib/domain.ts";

export interface StoredAssistant {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  /** Everything else (prompt, mounted bases, retrieval defaults), as protobuf JSON. */
  config: JsonObject;
}

export interface AssistantStore {
  /** Throws AlreadyExistsError when the name is taken. */
  create(assistant: StoredAssistant): Promise<StoredAssistant>;
  /** By id, else by name; throws NotFoundError. */
  get(idOrName: string): Promise<StoredAssistant>;
  /** Every assistant, by name. */
  list(): Promise<StoredAssistant[]>;
  /** Replaces name, config and updatedAt of the assistant with this id; NotFoundError, or AlreadyExistsError for a taken name. */
  update(id: string, next: Pick<StoredAssistant, "name" | "config" | "updatedAt">): Promise<StoredAssistant>;
  /** By id or name; throws NotFoundError. */
  delete(idOrName: string): Promise<StoredAssistant>;
}
