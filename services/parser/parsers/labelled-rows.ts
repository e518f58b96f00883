// A table as lines a reader (and a retriever) understands out of context: the header first as
// "Columns: …", then one line per row with every value labelled by its column ("City: Paris;
// Country: France"). A chunk cut from the middle of a table then still says what each number
// means — the header is in effect repeated on every row of every chunk.

export interface LabelledTable {
  lines: string[];
  /** The widest row's cell count. */
  width: number;
}

/** headerRow names the columns; an unnamed or extra column is "column N". Rows with no value are dropped. */
export function labelledRows(headerRow: readonly string[], rows: readonly (readonly string[])[]): LabelledTable {
  const width = Math.max(headerRow.length, ...rows.map((row) => row.length));
  const headers = Array.from({ length: width }, (_, i) => oneLine(headerRow[i] ?? "") || `column ${i + 1}`);
  const lines = [`Columns: ${headers.join("; ")}`];
  for (const row of rows) {
    const pairs = row.flatMap((cell, i) => {
      const value = oneLine(cell ?? "");
      return value ? [`${headers[i]}: ${value}`] : [];
    });
    if (pairs.length > 0) lines.push(pairs.join("; "));
  }
  return { lines, width };
}

/** A cell that spans lines is folded onto one so that each row stays one line. */
export function oneLine(cell: string): string {
  return cell.replace(/\s*\n\s*/g, " ").trim();
}
