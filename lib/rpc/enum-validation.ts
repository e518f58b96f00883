// proto3 enums are open: a number the schema does not name decodes without complaint (protobuf-es
// keeps it as a plain number), and a handler would quietly treat RetrievalMode 99 as whatever its
// switch falls back to. Every request message, and every message of a request stream, is checked
// here against its schema before a handler sees it; an unnamed value is `invalid_argument` naming
// the field, the value and the values that exist.
import type { DescEnum, DescField, DescMessage } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { InvalidInputError } from "../errors.ts";
import { toConnectError } from "./error-mapping.ts";

/** Nesting beyond this is not walked (the decoder already bounds recursion; our messages are shallow). */
const MAX_DEPTH = 32;

export function enumValidationInterceptor(): Interceptor {
  return (next) => async (request) => {
    const schema = request.method.input;
    if (!request.stream) {
      check(schema, request.message);
      return next(request);
    }
    const source = request.message;
    return next({
      ...request,
      message: (async function* () {
        for await (const message of source) {
          check(schema, message);
          yield message;
        }
      })(),
    });
  };
}

function check(schema: DescMessage, message: unknown): void {
  const problem = unknownEnumValue(schema, message as Record<string, unknown>, "", 0);
  if (problem) throw toConnectError(new InvalidInputError(problem));
}

/** Describes the first enum field holding a value its enum does not name, or undefined. */
export function unknownEnumValue(schema: DescMessage, message: Record<string, unknown>, prefix: string, depth: number): string | undefined {
  if (depth > MAX_DEPTH || !message) return undefined;
  for (const member of schema.members) {
    if (member.kind === "oneof") {
      const selected = message[member.localName] as { case?: string; value?: unknown } | undefined;
      const field = member.fields.find((f) => f.localName === selected?.case);
      const problem = field && checkField(field, selected!.value, prefix, depth);
      if (problem) return problem;
    } else {
      const problem = checkField(member, message[member.localName], prefix, depth);
      if (problem) return problem;
    }
  }
  return undefined;
}

function checkField(field: DescField, value: unknown, prefix: string, depth: number): string | undefined {
  const path = `${prefix}${field.name}`;
  switch (field.fieldKind) {
    case "enum":
      return checkEnum(field.enum, value, path);
    case "message":
      return value ? unknownEnumValue(field.message, value as Record<string, unknown>, `${path}.`, depth + 1) : undefined;
    case "list":
      return checkItems(field.listKind, field, [...((value as unknown[]) ?? []).entries()], path, depth);
    case "map":
      return checkItems(field.mapKind, field, Object.entries((value as Record<string, unknown>) ?? {}), path, depth);
    default:
      return undefined;
  }
}

/** The elements of a repeated or map field, keyed by index or map key. */
function checkItems(kind: string, field: DescField, items: [number | string, unknown][], path: string, depth: number): string | undefined {
  for (const [key, item] of items) {
    const at = `${path}[${key}]`;
    const problem =
      kind === "enum" ? checkEnum((field as { enum: DescEnum }).enum, item, at)
      : kind === "message" ? unknownEnumValue((field as { message: DescMessage }).message, item as Record<string, unknown>, `${at}.`, depth + 1)
      : undefined;
    if (problem) return problem;
  }
  return undefined;
}

function checkEnum(desc: DescEnum, value: unknown, path: string): string | undefined {
  if (typeof value !== "number" || desc.value[value]) return undefined;
  const known = desc.values.map((v) => `${v.name} (${v.number})`).join(", ");
  return `${path} is ${value}, which ${desc.typeName} does not define; use one of ${known}`;
}
