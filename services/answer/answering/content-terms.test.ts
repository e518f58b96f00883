import { describe, expect, it } from "vitest";
import { terms } from "./content-terms.ts";

describe("terms", () => {
  it("leaves out demonstratives and the words that wrap a request, which name no topic", () => {
    expect(terms("文中提到的灯塔有着怎样的用途？")).toEqual(["提到", "灯塔", "用途"]);
    expect(terms("此次比赛一共有多少天比赛日？")).not.toContain("此次");
    const request = terms("能给我介绍一下潮汐表吗？");
    for (const word of ["给", "介绍", "一下"]) expect(request).not.toContain(word);
    expect(request).toContain("潮汐");
  });

  it("keeps words of other scripts whole and drops English function words", () => {
    expect(terms("What is the tide table?")).toEqual(["tide", "table"]);
  });
});
