// JSON is flattened to one "path: value" line per leaf ("orders[2].customer.city: Lyon") rather
// than pretty printed. Pretty printing spends most of a chunk on braces and indentation, and a
// chunk cut from the middle of a deep object loses the keys that say what its values are; a
// flattened line carries its full key path, so every chunk is self-explanatory and the key names
// are searchable next to their values. String values are kept verbatim, line breaks included.
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

/** Deeper than this no real document goes; the flattened paths would be longer than any chunk. */
export const MAX_JSON_DEPTH = 256;

export function parseJson(text: string): ParsedContent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return { text: flatten(value).join("\n"), pages: [], sections: [], metadata: {} };
}

/** Depth first, in document order, with an explicit stack: nesting is the input's to choose, the call stack is not. */
function flatten(root: unknown): string[] {
  const lines: string[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: "", depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    const container = value !== null && typeof value === "object";
    if (container && depth >= MAX_JSON_DEPTH) {
      throw new InvalidInputError(`the JSON is nested more than ${MAX_JSON_DEPTH} levels deep (at ${path.slice(0, 80)}…); flatten it before uploading`);
    }
    if (Array.isArray(value)) {
      if (value.length === 0) lines.push(line(path, "[]"));
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 });
    } else if (container) {
      const entries = Object.entries(value);
      if (entries.length === 0) lines.push(line(path, "{}"));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        stack.push({ value: item, path: path ? `${path}.${key}` : key, depth: depth + 1 });
      }
    } else {
      lines.push(line(path, value === null ? "null" : String(value)));
    }
  }
  return lines;
}

function line(path: string, value: string): string {
  return path ? `${path}: ${value}` : value;
}
