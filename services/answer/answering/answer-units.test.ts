import { describe, expect, it } from "vitest";
import { answerUnits, splitSentences } from "./answer-units.ts";

describe("splitSentences", () => {
  it("splits on Chinese full stops and on line breaks", () => {
    expect(splitSentences("第一句。第二句！第三句？\n标题\n最后", "zh").map((s) => s.text)).toEqual(["第一句。", "第二句！", "第三句？", "标题", "最后"]);
  });

  it("joins English lines wrapped inside a paragraph, but not list items", () => {
    const text = "Citations are mapped,\nnot trusted. Markers\nare checked.\n- a list item\n- another";
    expect(splitSentences(text, "en").map((s) => s.text)).toEqual(["Citations are mapped, not trusted.", "Markers are checked.", "- a list item", "- another"]);
  });

  it("gives an opening bracket or quote after a full stop to the sentence it opens (ICU leaves it with the one before)", () => {
    const text = "前文。《子不语》一书。 「又」见。";
    const sentences = splitSentences(text, "zh");
    expect(sentences.map((s) => s.text)).toEqual(["前文。", "《子不语》一书。", "「又」见。"]);
    for (const s of sentences) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
  });

  it("does not end a sentence at an initial or a title, in English or inside Chinese", () => {
    expect(splitSentences("J. R. R. Tolkien wrote it. He met Mr. Smith. It rained.", "en").map((s) => s.text)).toEqual(["J. R. R. Tolkien wrote it.", "He met Mr. Smith.", "It rained."]);
    const text = "该教堂由Henry A. Walsh 设计。还有、A．Ｌ．纳戴等。";
    const sentences = splitSentences(text, "zh");
    expect(sentences.map((s) => s.text)).toEqual(["该教堂由Henry A. Walsh 设计。", "还有、A．Ｌ．纳戴等。"]);
    for (const s of sentences) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
    // A paragraph that ends in a capital's full stop still ends there.
    expect(splitSentences("The answer is in part B.\n\nNext paragraph.", "en").map((s) => s.text)).toEqual(["The answer is in part B.", "Next paragraph."]);
  });

  it("does not end a sentence at a full stop glued to the word after it (.NET, 圣若望．玛达)", () => {
    const text = "支援的语言有Java、Visual Basic .NET、CIL等。两旁摆著圣若望．玛达像。See node.js docs. Then stop.";
    expect(splitSentences(text, "zh").map((s) => s.text)).toEqual(["支援的语言有Java、Visual Basic .NET、CIL等。", "两旁摆著圣若望．玛达像。", "See node.js docs.", "Then stop."]);
  });

  it("keeps a quotation inside the sentence that quotes it, unless the line never closes it", () => {
    expect(splitSentences("他说：「你好！我是王。」然后走了。", "zh").map((s) => s.text)).toEqual(["他说：「你好！我是王。」", "然后走了。"]);
    expect(splitSentences("也就是无上我：“唵！自在居住。”下一句。", "zh").map((s) => s.text)).toEqual(["也就是无上我：“唵！自在居住。”", "下一句。"]);
    expect(splitSentences("He said “Stop! Go back.” Then he left.", "en").map((s) => s.text)).toEqual(["He said “Stop! Go back.”", "Then he left."]);
    // An unclosed quotation (a chunk cut it, or a typo) does not swallow the rest of the line.
    expect(splitSentences("他说：「你好！我是王。然后走了。", "zh").map((s) => s.text)).toEqual(["他说：「你好！", "我是王。", "然后走了。"]);
  });

  it("keeps an aside in brackets inside its sentence, whatever punctuation the aside holds", () => {
    const text = "云雀(ストップ!!_ひばりくん!)，是江口寿史的漫画作品。台湾版名为《变男变女，变变变！》。";
    expect(splitSentences(text, "zh").map((s) => s.text)).toEqual(["云雀(ストップ!!_ひばりくん!)，是江口寿史的漫画作品。", "台湾版名为《变男变女，变变变！》。"]);
    expect(splitSentences("Read the manual (chapter 2. Setup) first. Then start.", "en").map((s) => s.text)).toEqual(["Read the manual (chapter 2. Setup) first.", "Then start."]);
  });

  it("does not end a sentence at a title in 《》 that ends with an exclamation or question mark", () => {
    const text = "2008年3月播放的《CDTV×Sacas！》节目中第一次于公开场合演唱。同年发行单曲。";
    expect(splitSentences(text, "zh").map((s) => s.text)).toEqual(["2008年3月播放的《CDTV×Sacas！》节目中第一次于公开场合演唱。", "同年发行单曲。"]);
  });

  it("keeps offsets into the original text", () => {
    const text = "One. Two.\nThree.";
    for (const s of splitSentences(text, "en")) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
  });
});

describe("answerUnits", () => {
  const options = { locale: "en", startsDocument: false, longSentenceChars: 200 };

  it("marks the pieces a chunk's edges cut as fragments", () => {
    const units = answerUnits("- , so the cache is reused. The engines start. They then wait for", options);
    expect(units.map((u) => [u.text, u.fragment])).toEqual([
      [", so the cache is reused.", true],
      ["The engines start.", false],
      ["They then wait for", true],
    ]);
    // At the document's start the first sentence is whole, lower case or not.
    expect(answerUnits("iOS apps sync nightly.", { ...options, startsDocument: true })[0].fragment).toBe(false);
  });

  it("keeps list items and headings apart: items are whole, headings are not units", () => {
    const units = answerUnits("## Setup\n- install the engines\n- start Quarry", options);
    expect(units.map((u) => [u.text, u.fragment])).toEqual([
      ["install the engines", false],
      ["start Quarry", false],
    ]);
    // A heading holding sentence punctuation is still one line, none of it a unit.
    expect(answerUnits("# 停止！！云雀\n\n云雀是漫画。", { ...options, locale: "zh", startsDocument: true }).map((u) => u.text)).toEqual(["云雀是漫画。"]);
  });

  it("keeps a fenced code block whole, and marks one the chunk cut off", () => {
    const units = answerUnits("Run:\n\n```sh\nnpm ci\nnpm test\n```\n\nDone. Next:\n\n```sh\nnpm st", options);
    expect(units.map((u) => [u.kind, u.fragment])).toEqual([
      ["sentence", false],
      ["code", false],
      ["sentence", false],
      ["sentence", false],
      ["code", true],
    ]);
    expect(units[1].text).toBe("```sh\nnpm ci\nnpm test\n```");
  });

  it("cuts a long Chinese sentence at its clauses", () => {
    const long = "本作以三大故事为主轴，分别是以武田信玄等人为主的关东三国志，织田信长等人为主的战国三杰，丰富游戏内的剧情。";
    const units = answerUnits(long, { locale: "zh", startsDocument: true, longSentenceChars: 20 });
    expect(units.map((u) => u.text)).toEqual(["本作以三大故事为主轴，", "分别是以武田信玄等人为主的关东三国志，", "织田信长等人为主的战国三杰，", "丰富游戏内的剧情。"]);
    expect(units.every((u) => u.kind === "clause" && u.sentence === 0)).toBe(true);
  });

  it("takes the first Chinese sentence of a chunk inside its document as cut: nothing in it shows where the overlap began", () => {
    const zh = { locale: "zh", startsDocument: false, longSentenceChars: 200 };
    // "大辅先生因故去世" is the tail of "由于乡里大辅先生因故去世"; its whole clauses after the cut stay.
    expect(answerUnits("大辅先生因故去世，不得不寻找其他声优接手。从猛将传开始。", zh).map((u) => [u.text, u.fragment])).toEqual([
      ["大辅先生因故去世，", true],
      ["不得不寻找其他声优接手。", false],
      ["从猛将传开始。", false],
    ]);
    // At the document's start, or after a heading, it is whole.
    expect(answerUnits("大辅先生因故去世。", { ...zh, startsDocument: true })[0].fragment).toBe(false);
    expect(answerUnits("## 声优\n\n大辅先生因故去世。", zh)[0].fragment).toBe(false);
  });

  it("keeps the whole clauses of a Chinese sentence the chunk's edge cut, however short", () => {
    const units = answerUnits("单斑笛鲷分布于印度太平洋区，包括东非、马达加斯加、", { locale: "zh", startsDocument: true, longSentenceChars: 200 });
    expect(units.map((u) => [u.text, u.kind, u.fragment])).toEqual([
      ["单斑笛鲷分布于印度太平洋区，", "clause", false],
      ["包括东非、马达加斯加、", "clause", true],
    ]);
  });
});
