// A table becomes one line per row, each value labelled with its column: "City: Paris; Country:
// France". A chunk cut out of the middle of a table then still says what every number means,
// which raw CSV ("Paris,France,12") does not, and which is what retrieval needs. The header row
// is kept as the first line so the columns can be found by name too.
import Papa from "papaparse";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

const DELIMITER_NAMES: Record<string, string> = { ",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe" };

export function parseCsv(text: string, options: { tabSeparated: boolean }): ParsedContent {
  const result = Papa.parse<string[]>(text, {
    header: false,
    skipEmptyLines: "greedy",
    // Empty means "guess among the usual ones"; a .csv from a European spreadsheet is often ";".
    delimiter: options.tabSeparated ? "\t" : "",
  });
  const [headerRow, ...rows] = result.data;
  if (!headerRow || headerRow.every((cell) => cell.trim() === "")) throw new InvalidInputError("the file is empty");

  const width = Math.max(headerRow.length, ...rows.map((row) => row.length));
  const headers = Array.from({ length: width }, (_, i) => oneLine(headerRow[i] ?? "") || `column ${i + 1}`);
  const lines = [`Columns: ${headers.join("; ")}`];
  for (const row of rows) {
    const pairs = row.flatMap((cell, i) => {
      const value = oneLine(cell);
      return value ? [`${headers[i]}: ${value}`] : [];
    });
    if (pairs.length > 0) lines.push(pairs.join("; "));
  }

  return {
    text: lines.join("\n"),
    pages: [],
    sections: [],
    metadata: {
      delimiter: DELIMITER_NAMES[result.meta.delimiter] ?? result.meta.delimiter,
      rows: String(lines.length - 1),
      columns: String(width),
    },
  };
}

/** A cell that spans lines (quoted newlines) is folded onto one so that each row stays one line. */
function oneLine(cell: string): string {
  return cell.replace(/\s*\n\s*/g, " ").trim();
}
