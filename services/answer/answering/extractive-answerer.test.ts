import { describe, expect, it } from "vitest";
import type { ContextChunk } from "./context-builder.ts";
import { EXTRACTIVE_NOTICES, extractiveAnswer } from "./extractive-answerer.ts";
import { makeContext, makeHit } from "../testing/test-hits.ts";

/** Context chunks that sit inside their documents (not at offset 0), as most retrieved chunks do. */
/** A chunk of a document at a given position: index 0 opens the document. */
function chunkOf(id: string, text: string, documentId: string, index: number, number = 1): ContextChunk {
  const hit = makeHit(id, text, { documentId });
  hit.chunk.index = index;
  hit.chunk.start = index * 1000;
  return { number, hit, tokens: text.length };
}

function midDocument(texts: string[]): ContextChunk[] {
  return texts.map((text, i) => {
    const hit = makeHit(`m${i + 1}`, text);
    hit.chunk.index = 3;
    hit.chunk.start = 500;
    return { number: i + 1, hit, tokens: text.length };
  });
}

const body = (text: string) => text.split("\n\n").slice(1).join("\n\n");

describe("extractiveAnswer", () => {
  it("opens in the best-ranked document the evidence gate found to answer, not in a better-ranked one that only brushes the question", () => {
    const context = [
      chunkOf("a", "The Harbour Line opened in 1902. Its trains stop at the old market.", "doc-a", 2, 1),
      chunkOf("b", "Ferries to the islands leave hourly. The island ferry fare is four euros for adults.", "doc-b", 2, 2),
    ];
    const question = "What is the island ferry fare for adults?";
    expect(body(extractiveAnswer(question, context).text)).not.toContain("Harbour");
    const brushing = [chunkOf("a", "Adults pay more on the Harbour Line. Its trains stop at the old market.", "doc-a", 2, 1), context[1]];
    expect(body(extractiveAnswer(question, brushing).text).startsWith("Adults pay more")).toBe(true);
    const opened = body(extractiveAnswer(question, brushing, { openIn: ["doc-b"] }).text);
    expect(opened.startsWith("The island ferry fare is four euros for adults. [1]")).toBe(true);
    expect(opened).not.toContain("Harbour");
  });

  it("opens in the document whose title the question names, ahead of a higher-ranked one that mentions it", () => {
    const titled = (id: string, title: string, text: string, documentId: string, number: number) => {
      const chunk = chunkOf(id, text, documentId, 0, number);
      chunk.hit.chunk.sectionPath = [title];
      return chunk;
    };
    const context = [
      titled("a", "上海轨道交通17号线", "本线在2010年前的规划中番号定为17号线，2011年后改为20号线，编号L3，与18号线换乘。", "doc-17", 1),
      titled("b", "上海轨道交通18号线 (规划)", "上海轨道交通18号线，编号L5，为一条贯穿城市南北的切向轨道交通路线。", "doc-18", 2),
    ];
    const question = "上海轨道交通18号线的编号为多少？";
    const opened = body(extractiveAnswer(question, context).text);
    expect(opened.startsWith("上海轨道交通18号线，编号L5")).toBe(true);
    // With no title named, retrieval's order decides as before.
    const untitled = context.map((c) => ({ ...c, hit: { ...c.hit, chunk: { ...c.hit.chunk, sectionPath: [] } } }));
    expect(body(extractiveAnswer(question, untitled).text).startsWith("本线在2010年前")).toBe(true);
  });

  it("adds no other document's sentence for the rest of a question that names the document it asks about", () => {
    const titled = (id: string, title: string, text: string, documentId: string, number: number) => {
      const chunk = chunkOf(id, text, documentId, 1, number);
      chunk.hit.chunk.sectionPath = [title];
      return chunk;
    };
    const context = [
      titled("a", "陈荣捷", "1929年获哈佛大学哲学博士学位。1930年，任岭南大学教务长。1994年病逝于美国。", "chen", 1),
      titled("b", "张惠言", "清代词人，散文家。卒于嘉庆七年（1802年）。", "zhang", 2),
    ];
    const named = body(extractiveAnswer("陈荣捷卒于哪一年？", context).text);
    expect(named).toContain("1994年病逝于美国。");
    expect(named).not.toContain("嘉庆");
    // Not named, the question's subject may be spread over documents: the other one's sentence covers 卒.
    expect(body(extractiveAnswer("他卒于哪一年？", context).text)).toContain("卒于嘉庆七年（1802年）。");
  });

  it("finds the reason beside the sentence where another chunk's edge cuts it", () => {
    // The whole sentence ends the opening chunk; the reason follows it only in the next chunk,
    // whose edge cut the sentence to its last clause. The chunks' order is retrieval's.
    const context = [
      chunkOf("lead", "叶盛茂，中华民国法务部调查局前局长。卸任调查局长后遭起诉并被判刑，成为第一位被羁押及入狱的卸任调查局局长。", "ye", 0, 1),
      // Other passages giving reasons make a reason alone weigh little: only its place beside the sentence brings it in.
      chunkOf("other", "由于暴雨，列车停运。因为票价上涨，乘客减少。由于施工，车站关闭。因为大雾，航班延误。", "rail", 3, 3),
      chunkOf("next", "长后遭起诉并被判刑，成为第一位被羁押及入狱的卸任调查局局长。由于叶盛茂泄漏情资，一审被判有期徒刑10年。2012年假释出狱。", "ye", 1, 2),
    ];
    const answer = body(extractiveAnswer("叶盛茂为什么会成为第一位被羁押及入狱的卸任调查局局长？", context).text);
    expect(answer).toContain("由于叶盛茂泄漏情资，一审被判有期徒刑10年。");
    expect(answer).not.toContain("假释");
  });

  it("finds the reason further along the clauses of the sentence restating the question", () => {
    // The chunk's edge cut the sentence, so it is quoted by the clause; the reason is two clauses on.
    const hit = makeHit("news", "报导指处长在一次内部会议上，提出希望新一季节目更换主持，不再与现任主持续约，因他不能接受主持批评政府的手法，议员要求他公开交代。", { sectionPath: ["黄华麒"] });
    hit.chunk.index = 4;
    hit.chunk.start = 4000;
    const answer = body(extractiveAnswer("黄华麒为什么希望新一季节目更换主持？", [{ number: 1, hit, tokens: 1 }]).text);
    expect(answer).toContain("因他不能接受主持批评政府的手法。[1]");
  });

  it("shows a sentence nearly as good from each other document the gate found to answer an unnamed question", () => {
    const context = [
      chunkOf("a", "张世昌，中国足球运动员，司职守门员。他以火爆的性格闻名。", "zhang", 0, 1),
      chunkOf("b", "科瓦奇是克罗地亚足球运动员。在球场上他司职防守型中场。", "kovac", 0, 2),
    ];
    const both = body(extractiveAnswer("他司职什么位置？", context, { openIn: ["zhang", "kovac"] }).text);
    expect(both).toContain("司职守门员");
    expect(both).toContain("在球场上他司职防守型中场。[2]");
    // Only the documents the gate found to answer: one alone keeps the answer to itself.
    expect(body(extractiveAnswer("他司职什么位置？", context, { openIn: ["zhang"] }).text)).not.toContain("中场");
  });

  it("measures how close another sentence comes against the best one's own match, not its lead bonus", () => {
    // Every sentence is about 朱载圳 (the title) and none says 性格 or 特点: the lead opens the
    // answer, and the others, matching as well, are shown with it.
    const hit = makeHit("zhu", "朱载圳（），明世宗第四子、母卢靖妃。嘉靖十八年（1538年），封景王。朱载圳贪婪蛮横而嘉靖帝骄傲暴躁，父子很不和睦。", { sectionPath: ["朱载圳"] });
    hit.chunk.index = 0;
    hit.chunk.start = 0;
    const other = makeHit("jia", "嘉靖帝的性格多疑。明世宗在位四十五年。", { sectionPath: ["嘉靖帝"], documentId: "jiajing" });
    other.chunk.index = 2;
    other.chunk.start = 900;
    const answer = body(extractiveAnswer("朱载圳的性格有什么特点?", [{ number: 1, hit, tokens: 1 }, { number: 2, hit: other, tokens: 1 }]).text);
    expect(answer.startsWith("朱载圳（），明世宗第四子、母卢靖妃。[1]")).toBe(true);
    expect(answer).toContain("朱载圳贪婪蛮横而嘉靖帝骄傲暴躁，父子很不和睦。[1]");
  });

  it("shows the best of each document the question names equally, as of homonyms it cannot tell apart", () => {
    const river = (id: string, title: string, text: string, number: number) => {
      const chunk = chunkOf(id, text, id, 0, number);
      chunk.hit.chunk.sectionPath = [title];
      return chunk;
    };
    const context = [
      river("bristol", "雅芳河 (布里斯托)", "雅芳河源于格洛斯特郡，流经巴斯。为了区别同名河流，此河又称下雅芳河。", 1),
      river("hampshire", "雅芳河 (汉普郡)", "雅芳河源于威尔特郡，流经汉普郡。此河长137公里。", 2),
    ];
    const answer = body(extractiveAnswer("雅芳河发源于哪里？", context).text);
    expect(answer).toContain("雅芳河源于格洛斯特郡，流经巴斯。[1]");
    expect(answer).toContain("雅芳河源于威尔特郡，流经汉普郡。[2]");
    // Named once, the other river's sentence is not added: it adds nothing to the question's words.
    const one = [context[0], river("hampshire", "汉普郡的河流", "雅芳河源于威尔特郡，流经汉普郡。", 2)];
    expect(body(extractiveAnswer("雅芳河发源于哪里？", one).text)).not.toContain("威尔特郡");
  });

  const english = makeContext([
    "Our office opens at nine. To reset your password, open Settings and choose Security. The reset link expires after one hour.",
    "Invoices are sent monthly. A password reset also signs you out of every device.",
    "The cafeteria serves lunch from noon.",
  ]);

  it("opens with the sentence covering the question, as prose with markers, and leaves out unrelated ones", () => {
    const { text, found } = extractiveAnswer("How do I reset my password?", english);
    expect(found).toBe(true);
    expect(text.startsWith(`${EXTRACTIVE_NOTICES[0]}\n\n`)).toBe(true);
    expect(body(text).startsWith("To reset your password, open Settings and choose Security. [1]")).toBe(true);
    expect(text).not.toContain("office opens");
    expect(text).not.toContain("cafeteria");
    expect(text).not.toMatch(/^- /m); // prose, not bullets
  });

  it("stays within the reading budget and the sentence cap", () => {
    const { text } = extractiveAnswer("How do I reset my password?", english, { maxSentences: 1 });
    expect(body(text)).toBe("To reset your password, open Settings and choose Security. [1]");
    const tight = extractiveAnswer("How do I reset my password?", english, { budgetChars: 80 });
    expect(body(tight.text)).toBe("To reset your password, open Settings and choose Security. [1]");
  });

  it("numbers the sources it shows 1, 2, … in order, whatever their context numbers", () => {
    const context = makeContext([
      "The weather was mild all week.",
      "Backups run nightly at two o'clock.",
      "The cafeteria serves lunch from noon.",
      "Restoring takes about ten minutes.",
    ]);
    const result = extractiveAnswer("When do backups run, and how long does restoring take?", context);
    expect(result.sources.map((s) => s.number)).toEqual([2, 4]);
    expect(body(result.text)).toBe("Backups run nightly at two o'clock. [1] Restoring takes about ten minutes. [2]");
  });

  it("opens in the top-ranked document, adds from it, and quotes another document only for what is not covered", () => {
    const context = [
      { number: 1, hit: makeHit("a1", "The Bell Rock Lighthouse stands off Angus.", { documentId: "bell" }), tokens: 1 },
      { number: 2, hit: makeHit("b1", "The Bell Rock Lighthouse keepers lived ashore at Arbroath.", { documentId: "other" }), tokens: 1 },
      { number: 3, hit: makeHit("a2", "The lighthouse was completed in 1810.", { documentId: "bell" }), tokens: 1 },
    ];
    const result = extractiveAnswer("When was the Bell Rock Lighthouse completed?", context);
    // The other document's sentence matches as many words as the first, but adds nothing new.
    expect(result.sources.map((s) => s.hit.chunk.id)).toEqual(["a1", "a2"]);
    expect(body(result.text)).toBe("The Bell Rock Lighthouse stands off Angus. [1] The lighthouse was completed in 1810. [2]");
  });

  it("quotes whole sentences only: a chunk that starts mid-sentence loses that piece", () => {
    const context = midDocument([", so engines.sh fetch downloads the engines once. The engines cache lives in ~/.cache/quarry/engines."]);
    const { text } = extractiveAnswer("Where does the engines cache live?", context);
    expect(body(text)).toBe("The engines cache lives in ~/.cache/quarry/engines. [1]");
    // A chunk cut at its end loses its unfinished last sentence too.
    const cutEnd = extractiveAnswer("What does the cache hold?", makeContext(["The cache holds the engines. The cache also holds the models and the"]));
    expect(body(cutEnd.text)).toBe("The cache holds the engines. [1]");
  });

  it("never repeats a sentence that overlapping chunks share", () => {
    const context = makeContext([
      "Tika parses rich formats such as PDF and Word. It runs as its own Java process.",
      "It runs as its own Java process. Tika is optional in embedded mode.",
    ]);
    const { text } = extractiveAnswer("Does Tika run as a Java process, and is Tika optional?", context);
    expect(text.match(/It runs as its own Java process\./g)).toHaveLength(1);
    expect(text).toContain("Tika is optional in embedded mode. [2]");
  });

  it("shows a code block whole after the sentence that introduces it, not as run-on prose", () => {
    const context = makeContext(["To start the engines, run this:\n\n```sh\ndeploy/local/engines.sh up\neval \"$(deploy/local/engines.sh env)\"\n```\n\nThen start Quarry."]);
    const { text } = extractiveAnswer("How do I start the engines?", context);
    // "Then start Quarry." shares a word with the question but scores well below the sentence that answers: left out.
    expect(body(text)).toBe('To start the engines, run this: [1]\n\n```sh\ndeploy/local/engines.sh up\neval "$(deploy/local/engines.sh env)"\n```');
  });

  it("answers from Chinese passages with word segmentation, preferring the sentence that states what was asked", () => {
    const chinese = makeContext([
      "公司地址在北京。如需重置密码，请打开设置页面并选择安全选项。重置链接一小时后失效。",
      "发票每月寄出一次。",
    ]);
    const { text, found } = extractiveAnswer("如何重置我的密码？", chinese);
    expect(found).toBe(true);
    expect(text.startsWith(`${EXTRACTIVE_NOTICES[1]}\n\n`)).toBe(true);
    expect(body(text).startsWith("如需重置密码，请打开设置页面并选择安全选项。[1]")).toBe(true);
    expect(text).not.toContain("公司地址");
    expect(text).not.toContain("发票");
    // "哪一年" asks for a time: of two sentences naming the station, the one stating a year answers.
    const station = makeContext(["海宁西站是沪昆客运专线的一个车站。海宁西站于2010年正式开通。"]);
    expect(body(extractiveAnswer("海宁西站哪一年建成？", station, { maxSentences: 1 }).text)).toBe("海宁西站于2010年正式开通。[1]");
  });

  it("counts the words of a chunk's title for each of its sentences, so the rest of the question picks the sentence", () => {
    const name = "艾蒂安·保罗·马利·拉莫特";
    const text = `${name}生于比利时迪南，是一名天主教神父。1953年，获得法朗基奖。`;
    const question = `1953年，${name}获得了什么奖？`;
    const titled = [{ number: 1, hit: makeHit("t1", text, { sectionPath: [name] }), tokens: 1 }];
    expect(body(extractiveAnswer(question, titled, { maxSentences: 1 }).text)).toBe("1953年，获得法朗基奖。[1]");
    // Untitled, the sentence repeating the name's four parts outweighs the one that answers.
    expect(body(extractiveAnswer(question, makeContext([text]), { maxSentences: 1 }).text)).toContain("天主教神父");
  });

  it("prefers a sentence naming a place when the question asks where", () => {
    const context = makeContext(["陈荣捷是著名的华人哲学家，研究朱熹。陈荣捷是广东开平人。"]);
    expect(body(extractiveAnswer("陈荣捷是哪里人？", context, { maxSentences: 1 }).text)).toBe("陈荣捷是广东开平人。[1]");
  });

  it("quotes the whole clauses of a Chinese sentence the chunk's end cut off", () => {
    const context = midDocument(["本鱼体长椭圆形。单斑笛鲷分布于印度太平洋区，包括东非、马达加斯加、模里西斯、"]);
    expect(body(extractiveAnswer("单斑笛鲷分布在哪一大洋区？", context).text)).toBe("单斑笛鲷分布于印度太平洋区。[1]");
  });

  it("answers with the best sentence alone when it stands out, and adds a rival of the same document that scores nearly as well", () => {
    const clear = makeContext(["The lighthouse was completed in 1810. Its light was first lit in 1811. Keepers lived ashore."]);
    expect(body(extractiveAnswer("When was the lighthouse completed?", clear).text)).toBe("The lighthouse was completed in 1810. [1]");
    // Two sentences hold the question's words equally: the reader gets both, as they stand in the text.
    const unclear = makeContext(["The tower was built by Robert Stevenson. The tower was built of granite. Keepers lived ashore."]);
    expect(body(extractiveAnswer("What was the tower built of?", unclear).text)).toBe(
      "The tower was built by Robert Stevenson. [1] The tower was built of granite. [1]",
    );
    // A sentence for another part of the question is added too, however it scores against the first.
    const parts = makeContext(["陈荣捷的父亲是商人。陈荣捷的老师是胡适。陈荣捷喜欢散步。"]);
    expect(body(extractiveAnswer("陈荣捷的老师是谁？", parts).text)).toBe("陈荣捷的老师是胡适。[1]");
    expect(body(extractiveAnswer("陈荣捷的父亲和老师是谁？", parts).text)).toBe("陈荣捷的父亲是商人。[1]陈荣捷的老师是胡适。[1]");
  });

  it("shows every sentence that may be the answer within the character budget, however many short ones there are", () => {
    // Under its title every sentence is about 陈荣捷 and states a year: none is clearly best, and
    // the year asked for comes fifth. A count of three would cut it off at 60 characters.
    const hit = makeHit("life", "1929年获哈佛大学博士学位。1930年任岭南大学教务长。1936年去夏威夷大学任教。1942年任达特茅斯学院教授。1994年病逝。", { sectionPath: ["陈荣捷"] });
    hit.chunk.index = 1;
    hit.chunk.start = 1000;
    const context = [{ number: 1, hit, tokens: 1 }];
    expect(body(extractiveAnswer("陈荣捷卒于哪一年？", context).text)).toContain("1994年病逝。[1]");
    expect(body(extractiveAnswer("陈荣捷卒于哪一年？", context, { maxSentences: 3 }).text)).not.toContain("1994年");
    // The budget still bounds it.
    expect(body(extractiveAnswer("陈荣捷卒于哪一年？", context, { budgetChars: 30 }).text)).not.toContain("1994年");
  });

  it("prefers a document's opening sentence among sentences that match equally, wherever its chunk ranks", () => {
    const context = [
      chunkOf("later", "1994年，邹游随队获得联赛冠军。邹游后来担任教练。", "zou", 2, 1),
      chunkOf("lead", "邹游，中国足球运动员，司职中场。", "zou", 0, 2),
    ];
    const result = extractiveAnswer("邹游是什么人？", context, { maxSentences: 1 });
    expect(body(result.text)).toBe("邹游，中国足球运动员，司职中场。[1]");
    expect(result.sources.map((s) => s.hit.chunk.id)).toEqual(["lead"]);
  });

  it("answers a question asking what its subject is with the sentence stating it, not one repeating the question's word for the kind of answer", () => {
    // Mid-document chunks (the first Chinese sentence is the overlap's tail): no opening sentence to prefer, the question's form decides.
    const chinese = midDocument(["年迁居青岛。沈墨舟的职业生涯始于1950年的港务局。沈墨舟，油画家，以海港风景著称。"]);
    expect(body(extractiveAnswer("沈墨舟的职业是什么？", chinese, { maxSentences: 1 }).text)).toBe("沈墨舟，油画家，以海港风景著称。[1]");
    const english = midDocument(["Mira Holt's occupation records were lost in the fire of 1940. Mira Holt was a lighthouse engineer from Leith."]);
    expect(body(extractiveAnswer("What is the occupation of Mira Holt?", english, { maxSentences: 1 }).text)).toBe("Mira Holt was a lighthouse engineer from Leith. [1]");
    // A definition: the sentence saying what the term is, not one that only uses it.
    const term = midDocument(["年首次刊印。潮汐表的定义因港口而略有不同。潮汐表是预报某地每日潮位涨落时刻与高度的表格。"]);
    expect(body(extractiveAnswer("潮汐表的定义是什么？", term, { maxSentences: 1 }).text)).toBe("潮汐表是预报某地每日潮位涨落时刻与高度的表格。[1]");
  });

  it("counts a Chinese question word in part when a sentence holds its characters but not the word", () => {
    // 导演 is not in "由丁善玺执导", but 导 is: that sentence, not the one about the film's story, answers.
    const hit = makeHit("film", "年上映。本片讲述台湾的民间传说。本片于1988年由丁善玺执导。", { sectionPath: ["林投姐"] });
    hit.chunk.index = 1;
    hit.chunk.start = 1000;
    const context = [{ number: 1, hit, tokens: 1 }];
    expect(body(extractiveAnswer("林投姐的导演是谁？", context, { maxSentences: 1 }).text)).toBe("本片于1988年由丁善玺执导。[1]");
  });

  it("quotes a sentence whole from the chunk that holds it whole, not its clauses from the chunk that cut it", () => {
    const context = [
      chunkOf("a", "本鱼体长形。以仁王的舅舅藤原公光被罢免了官职，", "fish", 1, 1),
      chunkOf("b", "以仁王的舅舅藤原公光被罢免了官职，以仁王继位的梦想彻底破灭。此后以仁王隐居。", "fish", 0, 2),
    ];
    const result = extractiveAnswer("以仁王继位的梦想为何破灭？", context, { maxSentences: 1 });
    expect(body(result.text)).toBe("以仁王的舅舅藤原公光被罢免了官职，以仁王继位的梦想彻底破灭。[1]");
  });

  it("cites, of two overlapping chunks holding the sentence, the one that shows what surrounds it", () => {
    const context = [
      chunkOf("edge", "The keepers lived ashore. The tower is 35 metres tall.", "bell", 3, 1),
      chunkOf("middle", "It stands off Angus. The tower is 35 metres tall. Its light flashes white.", "bell", 4, 2),
    ];
    const result = extractiveAnswer("How tall is the tower?", context);
    expect(body(result.text)).toBe("The tower is 35 metres tall. [1]");
    expect(result.sources.map((s) => s.hit.chunk.id)).toEqual(["middle"]);
  });

  it("drops the comma a document opens with when its title was left out of the text", () => {
    const context = makeContext(["，又名《离岛大夫日志》，是一部改编成的电视剧。"]);
    expect(body(extractiveAnswer("离岛大夫日志是什么？", context).text)).toBe("又名《离岛大夫日志》，是一部改编成的电视剧。[1]");
  });

  it("says so when nothing matches", () => {
    const result = extractiveAnswer("What is the parking policy?", english);
    expect(result.found).toBe(false);
    expect(result.sources).toEqual([]);
    expect(result.text).toMatch(/no passage .* matches the question/);
    expect(result.text).not.toMatch(/\[\d\]/);
    expect(extractiveAnswer("停车政策是什么？", []).found).toBe(false);
  });

  it("quotes beside the sentence a why question restates the neighbour that gives its reason", () => {
    const spider = midDocument(["十字园蛛是一种常见的蜘蛛。细小的雄蛛交配时会很小心的走近雌蛛。若不小心，就会被雌蛛吃下。牠们多在秋季交配。"]);
    expect(body(extractiveAnswer("细小的雄蛛交配时为什么要很小心地走近雌蛛？", spider).text)).toBe("细小的雄蛛交配时会很小心的走近雌蛛。[1]若不小心，就会被雌蛛吃下。[1]");
    // The same sentence asked how, not why: it answers alone.
    expect(body(extractiveAnswer("细小的雄蛛交配时怎样走近雌蛛？", spider).text)).toBe("细小的雄蛛交配时会很小心的走近雌蛛。[1]");
    // A sentence drawing a consequence (因此…) has its reason before it.
    const road = midDocument(["坟场位于山顶。清明时山路实施管制，扫墓者须徒步上山。因此委员会于2006年决定兴建一条通往坟场的新路。新路全长约1500米。"]);
    expect(body(extractiveAnswer("委员会为什么在2006年决定兴建通往坟场的新路？", road).text)).toBe("清明时山路实施管制，扫墓者须徒步上山。[1]因此委员会于2006年决定兴建一条通往坟场的新路。[1]");
    // The neighbour stating a cause wins over the one the connective points to.
    const name = midDocument(["修道院建于十二世纪。这是因为修道院拥有不受公爵管理的特权。“弗赖永”这个名称源于古代德语词汇“frey”，意为自由。小镇位于河谷中。"]);
    expect(body(extractiveAnswer("为什么修道院的名称取自意为自由的古代德语词汇“frey”？", name).text)).toContain("这是因为修道院拥有不受公爵管理的特权。[1]");
    // A sentence that gives the reason itself is quoted alone.
    const closed = midDocument(["The lighthouse was closed in 1990 because the cliff was eroding. A museum opened in the keeper's house."]);
    expect(body(extractiveAnswer("Why was the lighthouse closed?", closed).text)).toBe("The lighthouse was closed in 1990 because the cliff was eroding. [1]");
  });

  it("quotes beside a sentence restating a when, how-many, where or who question the neighbour that states what was asked", () => {
    const career = midDocument(["占旭刚是中国举重运动员。2004年，占旭刚第三次参加奥运会，但在抓举比赛中三次试举全部失败。赛后，占旭刚正式结束运动生涯，着手行政工作。他现任浙江省体育局副局长。"]);
    expect(body(extractiveAnswer("占旭刚什么时候正式结束运动生涯？", career).text)).toBe(
      "2004年，占旭刚第三次参加奥运会，但在抓举比赛中三次试举全部失败。[1]赛后，占旭刚正式结束运动生涯，着手行政工作。[1]",
    );
    // The sentence that states the time answers alone.
    const dated = midDocument(["占旭刚是中国举重运动员。他于2004年正式结束运动生涯，着手行政工作。他现任浙江省体育局副局长。"]);
    expect(body(extractiveAnswer("占旭刚什么时候正式结束运动生涯？", dated).text)).toBe("他于2004年正式结束运动生涯，着手行政工作。[1]");
    // A neighbour without a time is not quoted for it.
    const undated = midDocument(["占旭刚是中国举重运动员。赛后，占旭刚正式结束运动生涯，着手行政工作。他现任浙江省体育局副局长。"]);
    expect(body(extractiveAnswer("占旭刚什么时候正式结束运动生涯？", undated).text)).toBe("赛后，占旭刚正式结束运动生涯，着手行政工作。[1]");
  });
});
