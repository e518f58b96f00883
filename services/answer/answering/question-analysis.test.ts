import { describe, expect, it } from "vitest";
import { analyseQuestion, identitySubject } from "./question-analysis.ts";

describe("analyseQuestion", () => {
  it("recognises a question asking what its subject is, and its subject", () => {
    expect(identitySubject("沈墨舟的职业是什么？")).toBe("沈墨舟");
    expect(identitySubject("沈墨舟是什么职业？")).toBe("沈墨舟");
    expect(identitySubject("什么是潮汐表？")).toBe("潮汐表");
    expect(identitySubject("潮汐表指的是什么？")).toBe("潮汐表");
    expect(identitySubject("青岚航运公司是什么性质的公司？")).toBe("青岚航运公司");
    expect(identitySubject("What is the occupation of Mira Holt?")).toBe("Mira Holt");
    expect(identitySubject("What is a tide table?")).toBe("tide table");
    expect(identitySubject("Who was Mira Holt?")).toBe("Mira Holt");
  });

  it("does not take a question about an attribute of the subject for one about what it is", () => {
    expect(identitySubject("沈墨舟的老师是谁？")).toBeUndefined();
    expect(identitySubject("青岚航运公司的主要业务是什么？")).toBeUndefined();
    expect(identitySubject("沈墨舟是哪一年出生的？")).toBeUndefined();
    expect(identitySubject("Who is the author of the tide table?")).toBeUndefined();
    expect(identitySubject("What is the fare for adults on the ferry?")).toBeUndefined();
  });

  it("leaves out the word naming the kind of answer, which the answering sentence need not hold", () => {
    const job = analyseQuestion("沈墨舟的职业是什么？");
    expect(job.terms).toEqual(["沈墨舟", "职业"]);
    expect(job.formWords).toEqual(["职业"]);
    expect(analyseQuestion("沈墨舟的老师是谁？").formWords).toEqual([]);
  });

  it("takes a name apart from the function character jieba glued to it, and keeps words of the language whole", () => {
    // jieba cuts 欧阳晏是 into 欧阳 and 晏是, 东湾街有 into 东湾 and 街有: a passage holds 晏 and 街, never the joins.
    expect(analyseQuestion("欧阳晏是谁的儿子？").terms).toEqual(["欧阳", "晏", "儿子"]);
    expect(analyseQuestion("青石蝮是什么颜色的？").terms).toEqual(["青石", "蝮", "颜色"]);
    expect(analyseQuestion("东湾街有多长？").terms).toContain("街");
    // 内有 is in jieba's table: a word of the language, not a join, so it stays as cut.
    expect(analyseQuestion("九龙酒店内有哪些客房？").terms).toContain("内有");
  });

  it("keeps a quoted word of two characters or more as a word of its own, even inside a longer one", () => {
    expect(analyseQuestion("刺角瓜为什么又叫”角瓜“？").terms).toEqual(expect.arrayContaining(["刺角瓜", "角瓜"]));
    expect(analyseQuestion("刺角瓜为什么又叫角瓜？").terms).not.toContain("角瓜");
  });

  it("does not take 多长, 多大 and the like (how long, how big) for words of the question's topic", () => {
    expect(analyseQuestion("东湾街有多长？").terms).toEqual(["东湾", "街"]);
    expect(analyseQuestion("这座水库的容量有多大？").terms).not.toContain("多大");
  });

  it("finds the words naming the kind of answer: the noun a question word governs, or the attribute asked of the subject", () => {
    // X的Y是哪里 / 是谁 / 叫什么 asks for Y as X的Y是什么 does: the address, not the word 住址.
    expect(analyseQuestion("灯塔看守人的住址是哪里？").answerTypeWords).toEqual(["住址"]);
    expect(analyseQuestion("这艘渡轮原来的名字叫什么？").answerTypeWords).toEqual(["名字"]);
    // A quantity asked of X (X的寿命有多长) names what is measured, which the passage states with it.
    expect(analyseQuestion("椰子猫的寿命有多长？").answerTypeWords).toEqual([]);
    expect(analyseQuestion("灰喜鹊属于什么科目？").answerTypeWords).toEqual(["科目"]);
    expect(analyseQuestion("这座灯塔有何作用？").answerTypeWords).toEqual(["作用"]);
    expect(analyseQuestion("这座灯塔的特点是什么？").answerTypeWords).toEqual(["特点"]);
    expect(analyseQuestion("这座灯塔在航运史上有着怎样的地位？").answerTypeWords).toEqual(["地位"]);
    expect(analyseQuestion("灯塔如何影响航运？").answerTypeWords).toEqual([]);
    expect(analyseQuestion("Which office did Mira Holt hold?").answerTypeWords).toEqual(["office"]);
    expect(analyseQuestion("灯塔在哪一年建成？").answerTypeWords).toEqual([]);
  });

  it("asks for a sentence that predicates something of the subject: a copula, or an appositive after a bracketed aside", () => {
    const cue = analyseQuestion("沈墨舟的职业是什么？").cue!;
    expect(cue.kind).toBe("identity");
    expect(cue.test("沈墨舟（1931－2002），中国油画家。")).toBe(true);
    expect(cue.test("沈墨舟是一名油画家。")).toBe(true);
    expect(cue.test("他在1950年开始职业生涯，沈墨舟的画多取材于海港。")).toBe(false);
    // An encyclopedia's lead whose copula was lost in extraction: the bracketed aside after the
    // subject is itself the mark of a predication.
    expect(cue.test("沈墨舟（1931－2002）中国油画家，以海港风景著称。")).toBe(true);
    const english = analyseQuestion("Who was Mira Holt?").cue!;
    expect(english.kind).toBe("identity");
    expect(english.test("Mira Holt (1890–1961) was a Scottish lighthouse engineer.")).toBe(true);
    expect(english.test("The lamp was designed in 1921 for Mira Holt's station.")).toBe(false);
  });

  it("asks for a name when 谁 or who asks about a role rather than what a named subject is", () => {
    expect(analyseQuestion("灯塔的第一任看守人是谁？").cue?.kind).toBe("person");
    expect(analyseQuestion("Who is the keeper?").cue?.kind).toBe("person");
    expect(analyseQuestion("沈墨舟是谁？").cue?.kind).toBe("identity");
  });

  it("takes a name jieba does not know (tagged unknown, not a person) for the person a who question asks for", () => {
    const cue = analyseQuestion("《停止！！云雀》是谁的漫画作品？").cue!;
    expect(cue.kind).toBe("person");
    expect(cue.test("是日本漫画家江口寿史的漫画作品，于周刊少年Jump连载。")).toBe(true);
    expect(cue.test("为1988年由丁善玺执导的电影作品。")).toBe(true);
    expect(cue.test("于周刊少年Jump连载，1983年动画化。")).toBe(false);
  });

  it("asks a why or what-for question for a sentence that gives a cause or a purpose, and does not count 因何 or 为何 as words a passage must hold", () => {
    const cue = analyseQuestion("雄蛛为什么要小心地走近雌蛛？").cue!;
    expect(cue.kind).toBe("reason");
    expect(cue.test("由于雌蛛体型较大，雄蛛会被吃下。")).toBe(true);
    expect(cue.test("雄蛛交配时会很小心的走近雌蛛。")).toBe(false);
    expect(cue.test("这些白点是基因突变的结果。")).toBe(false);
    expect(analyseQuestion("百老汇剧院是因何得名的？").cue?.kind).toBe("reason");
    expect(analyseQuestion("百老汇剧院是因何得名的？").terms).not.toContain("因何");
    expect(analyseQuestion("这座灯塔为何停用？").terms).not.toContain("为何");
    expect(analyseQuestion("评分方法的目的是什么？").cue?.kind).toBe("reason");
    const english = analyseQuestion("Why was the lighthouse closed?").cue!;
    expect(english.kind).toBe("reason");
    expect(english.test("It was closed because the cliff was eroding.")).toBe(true);
    expect(english.test("It has been closed since 1990.")).toBe(false);
    expect(analyseQuestion("When was the lighthouse closed?").cue?.kind).toBe("time");
  });
});
