// A table becomes one line per row, each value labelled with its column (labelled-rows.ts), which
// raw CSV ("Paris,France,12") does not do and retrieval needs.
import Papa from "papaparse";
import { InvalidInputError } from "../../../lib/errors.ts";
import { labelledRows } from "./labelled-rows.ts";
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

  const { lines, width } = labelledRows(headerRow, rows);

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
