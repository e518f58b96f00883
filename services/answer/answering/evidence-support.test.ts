import { describe, expect, it } from "vitest";
import type { ContextChunk } from "./context-builder.ts";
import { abstention, judgeEvidence, SUPPORT_THRESHOLD } from "./evidence-support.ts";
import { makeHit } from "../testing/test-hits.ts";

/** A small base: each entry a chunk of its own document, under its title. */
function base(docs: { title: string; text: string }[]): ContextChunk[] {
  return docs.map((d, i) => ({ number: i + 1, hit: makeHit(`c${i + 1}`, d.text, { sectionPath: [d.title], documentId: `doc-${i + 1}` }), tokens: d.text.length }));
}

/** Paragraphs of one article, each its own document; `agree`: each ranks the same in the keyword and the vector list. */
function paragraphs(agree: boolean): ContextChunk[] {
  return base([
    { title: "椰子猫", text: "椰子猫白天躲在树洞里，夜间外出觅食。" },
    { title: "椰子猫", text: "椰子猫，又名椰子狸，是灵猫科椰子猫属的动物。" },
    { title: "椰子猫", text: "椰子猫的毛色为灰棕色，面部有白色斑纹。" },
  ]).map((c, i) => ({ ...c, hit: { ...c.hit, explain: { ...c.hit.explain, bm25Rank: i + 1, vectorRank: agree ? i + 1 : i + 2 } } }));
}

const library = base([
  { title: "Harbour lighthouse", text: "The lighthouse lamp is serviced every 14 days. The keeper logs each visit." },
  { title: "Staff canteen", text: "The canteen serves lunch from noon. Fridays end at 14:00." },
  { title: "Architecture", text: "A service imports only lib/, gen/ and its own folder." },
]);

describe("judgeEvidence", () => {
  it("answers when one sentence holds what the question names", () => {
    const judged = judgeEvidence("How often is the lighthouse lamp serviced?", library);
    expect(judged.answered).toBe(true);
    expect(judged.coverage).toBeGreaterThanOrEqual(SUPPORT_THRESHOLD);
    expect(judged.best?.hit.chunk.id).toBe("c1");
    expect(judged.reason).toMatch(/^the best document holds \d\.\d\d of the question's weighted content words \(0\.5 needed\)/);
  });

  it("does not answer an off-topic question, and names the words no passage holds", () => {
    const judged = judgeEvidence("How long should green tea steep?", library);
    expect(judged.answered).toBe(false);
    expect(judged.coverage).toBeLessThan(SUPPORT_THRESHOLD);
    expect(judged.missingTerms).toEqual(expect.arrayContaining(["green", "tea", "steep"]));
  });

  it("does not let a document's scattered words answer: they must meet in one sentence", () => {
    const scattered = base([{ title: "Town notes", text: "The port opened in 1901. The railway closed in 1960. Ferries run hourly. The museum holds lamps." }]);
    // Four of the question's five words are in the document, never together: no sentence says
    // anything about the museum keeping railway lamps from the ferries.
    expect(judgeEvidence("Does the museum keep railway lamps from the ferries?", scattered).answered).toBe(false);
    expect(judgeEvidence("Does the museum hold lamps?", scattered).answered).toBe(true);
  });

  it("weighs a verb no passage uses as one a passage might say in other words, and a noun no passage holds in full", () => {
    const fish = base([
      { title: "新加坡鹦嘴鱼", text: "新加坡鹦嘴鱼，又名绿颔鹦哥鱼，为鹦哥鱼科的其中一种。喜成群地栖居于陡峭的珊瑚礁斜坡水域。" },
      { title: "海港", text: "海港的灯塔每两周检修一次。" },
      { title: "椰子猫", text: "椰子猫白天躲在树洞里，夜间外出觅食。" },
    ]);
    // 通常, 喜欢 and 居住 are not in the text, which says 喜…栖居: the question is answered.
    expect(judgeEvidence("新加坡鹦嘴鱼通常喜欢居住在哪里？", fish).answered).toBe(true);
    // 幼鱼 names something the text never mentions: no passage is about the young fish.
    expect(judgeEvidence("新加坡鹦嘴鱼的幼鱼喜欢居住在哪里？", fish).answered).toBe(false);
  });

  it("does not ask the passage for the word naming the kind of answer, only for what the question is about", () => {
    const birds = base([
      { title: "灰喜鹊", text: "灰喜鹊是鸦科的一种鸟，常见于华北。" },
      { title: "海港", text: "海港的灯塔每两周检修一次。" },
    ]);
    // 科目 names the kind of answer; the sentence states it (鸦科) without the word.
    expect(judgeEvidence("灰喜鹊属于什么科目？", birds).answered).toBe(true);
    // The subject itself is still asked for: a passage about another bird does not answer.
    expect(judgeEvidence("白头鹎属于什么科目？", birds).answered).toBe(false);
    const english = base([
      { title: "Keeper", text: "Mira Holt served as principal keeper at Skerry Point." },
      { title: "Canteen", text: "The canteen serves lunch from noon." },
    ]);
    expect(judgeEvidence("Which office did Mira Holt hold at Skerry Point?", english).answered).toBe(true);
    expect(judgeEvidence("Which office did Tom Reid hold at Skerry Point?", english).answered).toBe(false);
  });

  it("reads a sentence under its document's title: the subject need not be repeated", () => {
    const zh = base([
      { title: "陈荣捷", text: "1994年病逝于美国。" },
      { title: "于乐", text: "于乐是中国足球运动员，司职后卫。" },
    ]);
    expect(judgeEvidence("陈荣捷在哪里病逝？", zh).answered).toBe(true);
    // The subject is in no document: the other words do not make one about it.
    const judged = judgeEvidence("徐晓飞在哪里病逝？", zh);
    expect(judged.answered).toBe(false);
    expect(judged.missingTerms).toContain("徐晓飞");
    expect(judged.reason).toMatch(/^最相关的文档覆盖问题加权实词的 0\.\d\d（需要 0\.5）；缺少：徐晓飞/);
  });

  it("counts a Chinese word jieba glued to the next character for the part the passage holds", () => {
    const zh = base([{ title: "尚恩", text: "尚恩喜欢钓鱼和爱好摄影。" }]);
    expect(judgeEvidence("尚恩有什么爱好？", zh).answered).toBe(true);
  });

  it("weighs a word by its rarity in the language: a common word the passage puts otherwise does not outweigh the subject", () => {
    // Three paragraphs of one article, as retrieval returns them for a question about its subject:
    // the subject is in all three, so among them it tells nothing apart, and 又称 (also called) is
    // in none (the passage says 又名). Weighed by the passages alone, 又称 outweighs the subject;
    // in the language it is a common word, and the name is not.
    const civet = paragraphs(false);
    expect(judgeEvidence("椰子猫又称什么？", civet).answered).toBe(true);
    // A question about something no paragraph states is still not answered.
    expect(judgeEvidence("椰子猫的寿命有多长？", civet).answered).toBe(false);
  });

  it("weighs by the language alone when keyword and vector search both rank the first passage first", () => {
    // 藏身 (hides) and 休息 (rests) where the passage says 躲 (shelters): the lists agreeing singles the passage out.
    expect(judgeEvidence("椰子猫白天藏身在哪里休息？", paragraphs(false)).answered).toBe(false);
    expect(judgeEvidence("椰子猫白天藏身在哪里休息？", paragraphs(true)).answered).toBe(true);
  });

  it("keeps weighing English words by the retrieved passages when the lists agree: no language table stands in for them", () => {
    const agreeing = base([
      { title: "Skerry Point lighthouse", text: "The lighthouse lamp is serviced every 14 days by the keeper." },
      { title: "Boathouse", text: "The spare key hangs behind the tide table in the boathouse." },
    ]).map((c, i) => ({ ...c, hit: { ...c.hit, explain: { ...c.hit.explain, bm25Rank: i + 1, vectorRank: i + 1 } } }));
    // Two of the four words are in the first passage; the two it lacks are in no passage, so they weigh more.
    const judged = judgeEvidence("When was the lighthouse keeper's boat painted?", agreeing);
    expect(judged.answered).toBe(false);
    expect(judged.missingTerms).toEqual(["boat", "painted"]);
    expect(judgeEvidence("Who services the lighthouse lamp?", agreeing).answered).toBe(true);
  });

  it("does not count agreement when a single document was retrieved: both lists rank it first whatever the question", () => {
    const one = paragraphs(true).map((c) => ({ ...c, hit: { ...c.hit, chunk: { ...c.hit.chunk, documentId: "civet" } } }));
    expect(judgeEvidence("椰子猫白天藏身在哪里休息？", one).answered).toBe(false);
  });

  it("does not answer from nothing, nor a question that names nothing", () => {
    expect(judgeEvidence("Where is the lamp?", [])).toMatchObject({ answered: false, reason: "nothing was retrieved" });
    expect(judgeEvidence("And then?", library)).toMatchObject({ answered: false, reason: "the question names nothing a passage could be matched on" });
  });

  it("judges a follow-up on its own words, and on the words it was searched with when it names nothing", () => {
    // "And who do I call?" searched with the previous question's words finds the lighthouse, which
    // says nothing about calling anyone.
    const call = judgeEvidence("And who do I call?", library, "lighthouse lamp serviced And who do I call?");
    expect(call.answered).toBe(false);
    expect(call.questionTerms).toEqual(["call"]);
    expect(judgeEvidence("And who logs the visits?", library, "lighthouse lamp And who logs the visits?").answered).toBe(true);
    // A change of subject is judged on the new one, whatever the previous question was about.
    expect(judgeEvidence("When does the canteen serve lunch?", library, "green tea steep When does the canteen serve lunch?").answered).toBe(true);
    const where = judgeEvidence("And where?", library, "lighthouse lamp serviced And where?");
    expect(where.questionTerms).toEqual(["lighthouse", "lamp", "serviced"]);
    expect(where.answered).toBe(true);
  });
});

describe("abstention", () => {
  it("says so in the question's language", () => {
    expect(abstention("Where?").text).toBe("The selected knowledge bases do not answer this question.");
    expect(abstention("在哪里？").text).toBe("所选知识库没有回答这个问题。");
  });
});
