// JSON is flattened to one "path: value" line per leaf ("orders[2].customer.city: Lyon") rather
// than pretty printed. Pretty printing spends most of a chunk on braces and indentation, and a
// chunk cut from the middle of a deep object loses the keys that say what its values are; a
// flattened line carries its full key path, so every chunk is self-explanatory and the key names
// are searchable next to their values. String values are kept verbatim, line breaks included.
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

export function parseJson(text: string): ParsedContent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const lines: string[] = [];
  flatten(value, "", lines);
  return { text: lines.join("\n"), pages: [], sections: [], metadata: {} };
}

function flatten(value: unknown, path: string, lines: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) lines.push(line(path, "[]"));
    value.forEach((item, i) => flatten(item, `${path}[${i}]`, lines));
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) lines.push(line(path, "{}"));
    for (const [key, item] of entries) flatten(item, path ? `${path}.${key}` : key, lines);
  } else {
    lines.push(line(path, value === null ? "null" : String(value)));
  }
}

function line(path: string, value: string): string {
  return path ? `${path}: ${value}` : value;
}
