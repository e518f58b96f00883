// Limits on fan-out, before anything else reads a request: every repeated field of a public request
// is de-duplicated (a list of ids or names means a set; the same base named 2,000 times once held a
// search for 13 s and an admin's call behind it) and capped, with INVALID_ARGUMENT naming the field.
// Walks the message by its descriptor, so a repeated field a new RPC adds is covered without a rule.
import type { Interceptor } from "@connectrpc/connect";
import type { DescField } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { InvalidInputError } from "../../lib/errors.ts";

/** Knowledge bases one request may name (a search fans out to each). */
export const MAX_KNOWLEDGE_BASES = 64;
/** Entries of any other repeated or map field. */
export const MAX_REPEATED = 1000;

const KNOWLEDGE_BASE_FIELDS = new Set(["knowledge_bases", "knowledge_base_ids"]);

export function requestLimitsInterceptor(): Interceptor {
  return (next) => async (request) => {
    if (!request.stream) {
      limitRequest(reflect(request.method.input, request.message));
      return next(request);
    }
    const source = request.message;
    const input = request.method.input;
    return next({
      ...request,
      message: (async function* () {
        for await (const message of source) {
          limitRequest(reflect(input, message));
          yield message;
        }
      })(),
    });
  };
}

/** De-duplicates scalar lists in place and throws for a list or map over its cap. */
export function limitRequest(message: ReflectMessage, path = ""): void {
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    const name = path + field.name;
    if (field.fieldKind === "list") {
      const list = message.get(field);
      if (field.listKind !== "message") {
        const unique = [...new Set(list)];
        if (unique.length < list.size) {
          list.clear();
          for (const value of unique) list.add(value);
        }
      }
      checkCount(field, name, list.size);
      if (field.listKind === "message") for (const item of list) limitRequest(item as ReflectMessage, `${name}[].`);
    } else if (field.fieldKind === "map") {
      const map = message.get(field);
      checkCount(field, name, map.size);
      if (field.mapKind === "message") for (const item of map.values()) limitRequest(item as ReflectMessage, `${name}{}.`);
    } else if (field.fieldKind === "message") {
      limitRequest(message.get(field), `${name}.`);
    }
  }
}

function checkCount(field: DescField, name: string, count: number) {
  const knowledgeBases = KNOWLEDGE_BASE_FIELDS.has(field.name);
  const limit = knowledgeBases ? MAX_KNOWLEDGE_BASES : MAX_REPEATED;
  if (count <= limit) return;
  const what = knowledgeBases ? "knowledge bases" : "entries";
  throw new InvalidInputError(`${name} names ${count} different ${what}; a request may name at most ${limit}`);
}
