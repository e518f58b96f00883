import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHINESE_ISSUES_CSV, CUSTOMERS_CSV } from "../../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../../test/support/shared-material.ts";
import { parseCsv } from "./csv-parser.ts";

describe("parseCsv", () => {
  it("labels every value with its column, one row per line, header first", () => {
    const { text, metadata } = parseCsv(CUSTOMERS_CSV, { tabSeparated: false });
    const lines = text.split("\n");
    expect(lines[0]).toBe("Columns: Index; Customer Id; First Name; Last Name; Company; City; Country; Phone 1; Phone 2; Email; Subscription Date; Website");
    expect(lines).toHaveLength(6);
    // The quoted field with a comma stays one value.
    expect(lines[2]).toContain("First Name: Teodor; Last Name: Vance, Jr; Company: Vance Marine");
    expect(metadata).toMatchObject({ delimiter: "comma", rows: "5", columns: "12" });
  });

  it("keeps multi-line Chinese cells on their row's line", () => {
    const { text, metadata } = parseCsv(CHINESE_ISSUES_CSV, { tabSeparated: false });
    const lines = text.split("\n");
    expect(metadata.rows).toBe("5");
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe("Columns: column 1; 标题; 日期; 链接; 内容; 编号");
    expect(lines[1]).toBe("column 1: 0; 标题: 安装时报错; 日期: 2024-03-01; 链接: https://example.com/issues/1; 内容: 按照说明安装后启动报错， 提示找不到配置文件。; 编号: 1");
    expect(lines[3]).toContain("内容: 同一个问题多次检索， 结果顺序不一致， 请问是否正常？; 编号: 3");
    expect(lines.slice(1).every((line) => line.startsWith("column 1: "))).toBe(true);
  });

  it("reads TSV and names unnamed or extra columns", () => {
    const { text } = parseCsv("name\t\nAda\tLovelace\tLondon\n", { tabSeparated: true });
    expect(text).toBe("Columns: name; column 2; column 3\nname: Ada; column 2: Lovelace; column 3: London");
  });

  it("guesses a semicolon delimiter and skips empty cells", () => {
    const { text, metadata } = parseCsv("city;country;note\nParis;France;\nLyon;;big\n", { tabSeparated: false });
    expect(metadata.delimiter).toBe("semicolon");
    expect(text.split("\n").slice(1)).toEqual(["city: Paris; country: France", "city: Lyon; note: big"]);
  });
});

describeWithShared("corpus/docs", "parseCsv on real-world tables", (docs) => {
  const readText = (name: string) => readFileSync(path.join(docs, name), "utf8");

  it("reads a customer export with a quoted comma", () => {
    const { text, metadata } = parseCsv(readText("csv-comma.csv"), { tabSeparated: false });
    expect(text.split("\n")[2]).toContain("First Name: Preston; Last Name: Lozano, Dr; Company: Vega-Gentry");
    expect(metadata).toMatchObject({ delimiter: "comma", rows: "5", columns: "12" });
  });

  it("keeps 172 rows of multi-line Chinese issues on 172 lines", () => {
    const { text, metadata } = parseCsv(readText("zh_langchain-ChatGLM_closed_issues.csv"), { tabSeparated: false });
    expect(metadata.rows).toBe("172");
    expect(text.split("\n")).toHaveLength(173);
  });
});
