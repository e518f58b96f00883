import { describe, expect, it } from "vitest";
import { namedTitles, namesTitle } from "./title-naming.ts";

describe("namesTitle", () => {
  it("finds the title whole in the question, across punctuation, width, spaces and case", () => {
    expect(namesTitle("上海轨道交通18号线的编号为多少？", ["上海轨道交通18号线"])).toBe(true);
    expect(namesTitle("《停止！！ 云雀》是谁的漫画作品？", ["停止！！云雀"])).toBe(true);
    expect(namesTitle("Who designed the Harbour Line?", ["harbour line", "History"])).toBe(true);
  });

  it("drops a trailing disambiguation in brackets", () => {
    expect(namesTitle("林投姐的导演是谁？", ["林投姐 (1988年电影)"])).toBe(true);
    expect(namesTitle("林投姐的导演是谁？", ["林投姐（电影）"])).toBe(true);
  });

  it("does not match a part of the title, a one-character title or no title", () => {
    expect(namesTitle("18号线的编号为多少？", ["上海轨道交通18号线"])).toBe(false);
    expect(namesTitle("鸡是什么？", ["鸡"])).toBe(false);
    expect(namesTitle("What is it?", [])).toBe(false);
  });

  it("counts a title held inside a longer named title as a part of that name, not as named", () => {
    const paths = [["龙烟铁路"], ["德龙烟铁路"], ["德龙烟铁路", "线路"], ["大莱龙铁路"]];
    expect(namedTitles("德龙烟铁路全长多少公里？", paths)).toEqual([false, true, true, false]);
    expect(namedTitles("龙烟铁路全长多少公里？", paths)).toEqual([true, false, false, false]);
  });
});
