// `quarry assistant create|list|show|update|delete`, `quarry conversations list|show|delete`,
// `quarry turn show`, and `quarry chat` (cli/chat-session.ts): assistants and conversations on the gateway.
import { readFileSync } from "node:fs";
import { clone, create, toJsonString } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError, Option, type Command } from "commander";
import { QueryRewrite, TurnSchema, type Turn } from "../gen/quarry/answer/v1/answer_pb.ts";
import { AssistantRetrievalSchema, AssistantSchema, KnowledgeBaseMountSchema, QueryRewriteMode, type Assistant } from "../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod, RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { chatSession } from "./chat-session.ts";
import { reportLine } from "./error-report.ts";
import { MODE_BY_NAME, MODES, type ModeName } from "./commands.ts";
import { gatewayClient } from "../client/gateway-client.ts";
import { FUSION_METHODS, fraction, QUERY_REWRITES, type FusionName, type QueryRewriteName } from "../client/retrieval-flags.ts";


/** "manuals", "manuals:5" or "manuals:5:10": a base, its top-k and its priority. */
export function parseMount(spec: string) {
  const match = /^(.+?)(?::(\d+))?(?::(-?\d+))?$/.exec(spec.trim());
  if (!match || !match[1]) throw new InvalidArgumentError(`"${spec}" is not NAME[:TOP_K[:PRIORITY]], e.g. manuals:5:10`);
  return create(KnowledgeBaseMountSchema, { knowledgeBase: match[1], topK: Number(match[2] ?? 0), priority: Number(match[3] ?? 0) });
}

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError("It must be a number of at least 0.");
  return n;
}

function wholeNumber(value: string): number {
  const n = number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError("It must be a whole number.");
  return n;
}

const modeName = (m: RetrievalMode) => (Object.entries(MODE_BY_NAME).find(([, v]) => v === m)?.[0] ?? "hybrid") as ModeName;
const rewriteName = (m: QueryRewriteMode) => Object.entries(QUERY_REWRITES).find(([, v]) => v === m)?.[0] ?? String(m);
const fusionName = (r: Assistant["retrieval"]) =>
  r?.fusion === FusionMethod.CONVEX ? `convex (alpha ${r.convexAlpha ?? 0.8})` : "rrf";
const when = (t: { seconds: bigint } | undefined) => (t ? timestampDate(t as never).toISOString() : "");

interface AssistantOptions {
  kb?: ReturnType<typeof parseMount>[];
  prompt?: string;
  promptFile?: string;
  description?: string;
  mode?: ModeName;
  topK?: number;
  minScore?: number;
  hideFileNames?: boolean;
  rerank?: boolean;
  rewrite?: QueryRewriteName;
  fusion?: FusionName;
  alpha?: number;
  name?: string;
  url: string;
}

/** The assistant with the options given applied; fields not given keep their value. */
function applyOptions(base: Assistant, o: AssistantOptions): Assistant {
  const a = clone(AssistantSchema, base);
  if (o.name !== undefined) a.name = o.name;
  if (o.kb) a.knowledgeBases = o.kb;
  if (o.description !== undefined) a.description = o.description;
  if (o.prompt !== undefined) a.systemPrompt = o.prompt;
  if (o.promptFile !== undefined) a.systemPrompt = readFileSync(o.promptFile, "utf8");
  a.retrieval ??= create(AssistantRetrievalSchema);
  if (o.mode) a.retrieval.mode = MODE_BY_NAME[o.mode];
  if (o.topK !== undefined) a.retrieval.topK = o.topK;
  if (o.minScore !== undefined) a.retrieval.minScore = o.minScore;
  if (o.rerank !== undefined) a.retrieval.rerank = o.rerank;
  if (o.rewrite !== undefined) a.retrieval.rewrite = QUERY_REWRITES[o.rewrite];
  if (o.fusion !== undefined) a.retrieval.fusion = FUSION_METHODS[o.fusion];
  // Alpha weighs only convex fusion; switching to RRF drops a weight that would no longer mean anything.
  if (o.fusion === "rrf") a.retrieval.convexAlpha = undefined;
  if (o.alpha !== undefined) a.retrieval.convexAlpha = o.alpha;
  if (o.hideFileNames !== undefined) a.hideFileNames = o.hideFileNames;
  return a;
}

export function describeAssistant(a: Assistant, baseNames: Map<string, string>): string {
  const r = a.retrieval;
  const lines = [
    `${a.name} (${a.id})${a.description ? ` — ${a.description}` : ""}`,
    ...a.knowledgeBases.map((m) => `  knowledge base ${baseNames.get(m.knowledgeBase) ?? m.knowledgeBase} (${m.knowledgeBase}): top-k ${m.topK || "default"}, priority ${m.priority}`),
    `  retrieval: ${modeName(r?.mode ?? 0)}, top-k ${r?.topK || 8}, min score ${r?.minScore ?? 0}${r?.rerank ? ", rerank" : ""}${r?.rewrite ? `, rewrite ${rewriteName(r.rewrite)}` : ""}, fusion ${fusionName(r)}`,
    `  file names ${a.hideFileNames ? "hidden from" : "shown to"} the model`,
    ...(a.systemPrompt ? [`  system prompt: ${a.systemPrompt.replace(/\s+/g, " ").slice(0, 200)}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** A turn's provenance for a person: what was searched, what each base returned, what reached the model. */
export function describeTurn(t: Turn): string {
  const p = t.provenance;
  const out = [`turn ${t.id} — #${t.number} of conversation ${t.conversationId}, ${when(t.createdAt)}`, `question: ${t.question}`];
  if (!p) return `${out.join("\n")}\n`;
  out.push(`searched for: ${p.retrievalQuery} (${QueryRewrite[p.rewrite].toLowerCase().replace(/_/g, " ")}: ${p.rewriteNote})`);
  out.push(`settings: ${modeName(p.retrieval?.mode ?? 0)}, top-k ${p.retrieval?.topK ?? 0}, min score ${p.retrieval?.minScore ?? 0}; history: ${p.historyTurns} earlier turn(s)`);
  for (const list of p.lists) {
    const kind = list.corrections ? "corrections " : "";
    out.push(`${kind}list ${list.knowledgeBaseId || "(all named bases)"}: priority ${list.priority}, top-k ${list.topK}, ${list.hits.length} hit(s)`);
    for (const h of list.hits) {
      const e = h.explain;
      out.push(`  #${h.rank} ${h.fileName} ${h.chunkId} score ${h.score.toFixed(4)} (bm25 #${e?.bm25Rank || "-"} ${(e?.bm25Score ?? 0).toFixed(3)}, vector #${e?.vectorRank || "-"} ${(e?.vectorScore ?? 0).toFixed(3)})`);
      const m = h.correctionMatch;
      if (m) out.push(`    question "${m.question}": ${m.method} ${m.similarity.toFixed(3)} (threshold ${m.threshold}) → ${m.relevant ? "matches, ranked first" : "does not match, left out"}`);
    }
  }
  out.push(`fusion: ${p.fusionRule}`);
  for (const f of p.fused) {
    const fate = f.contextNumber ? `context [${f.contextNumber}]` : `left out (${f.excludedReason}${f.duplicateOf ? ` of [${f.duplicateOf}]` : ""})`;
    out.push(`  #${f.rank} ${f.chunkId} from ${f.knowledgeBaseId}${f.correction ? " (correction)" : ""} (its #${f.listRank}) → ${fate}`);
  }
  out.push(`context: ${p.context.length} chunk(s), ${p.contextTokens} tokens`);
  if (p.correctionsUsed.length > 0) out.push(`answered from correction(s): ${p.correctionsUsed.join(", ")}`);
  out.push(`model: ${p.model}${p.usage ? `, ${p.usage.promptTokens} prompt + ${p.usage.completionTokens} completion tokens` : ""}`);
  out.push(`citations: ${p.resolvedMarkers} resolved, ${p.unsupportedMarkers} unsupported, ${p.markersDropped.length} dropped`);
  for (const s of p.stages) out.push(`  ${s.stage}: ${s.durationMs.toFixed(1)} ms — ${s.note}`);
  if (p.error) out.push(`failed: ${p.error}`);
  if (p.traceId) out.push(`trace: ${p.traceId}`);
  out.push(`answer: ${t.answer}`);
  return `${out.join("\n")}\n`;
}

export function registerAssistantCommands(program: Command, urlOption: () => Option): void {
  const mountOption = () => new Option("--kb <spec...>", "knowledge base(s): NAME[:TOP_K[:PRIORITY]], higher priority first").argParser((v: string, prev?: ReturnType<typeof parseMount>[]) => [...(prev ?? []), parseMount(v)]);
  const configOptions = (cmd: Command) =>
    cmd
      .addOption(mountOption())
      .option("--prompt <text>", "system prompt: instructions before the rules on citing")
      .option("--prompt-file <file>", "read the system prompt from a file")
      .option("--description <text>")
      .addOption(new Option("--mode <mode>", "retrieval mode").choices(MODES))
      .option("--top-k <n>", "chunks in the context, in all", wholeNumber)
      .option("--min-score <x>", "drop hits scoring below this", number)
      .option("--hide-file-names", "hide source file names from the model")
      .option("--no-hide-file-names", "show source file names to the model")
      .option("--rerank", "rerank the fused candidates (when a reranker is configured)")
      .option("--no-rerank")
      .addOption(new Option("--rewrite <mode>", "query rewriting").choices(Object.keys(QUERY_REWRITES)))
      .addOption(new Option("--fusion <how>", "how hybrid fuses keyword and vector hits: rrf (ranks, the default) or convex (normalised scores)").choices(Object.keys(FUSION_METHODS)))
      .option("--alpha <weight>", "with --fusion convex: the vector list's weight, 0 to 1 (default 0.8)", fraction)
      .addOption(urlOption());

  const assistant = program.command("assistant").description("assistants: a prompt, knowledge bases with priorities, retrieval defaults");
  configOptions(assistant.command("create").argument("<name>")).action(async (name: string, o: AssistantOptions) => {
    const client = gatewayClient(o.url);
    const res = await client.createAssistant({ assistant: applyOptions(create(AssistantSchema, { name }), o) });
    process.stdout.write(`created ${describeAssistant(res.assistant!, await baseNames(client))}`);
  });
  assistant
    .command("list")
    .addOption(urlOption())
    .action(async (o: { url: string }) => {
      const client = gatewayClient(o.url);
      const { assistants } = await client.listAssistants({});
      if (assistants.length === 0) process.stdout.write("no assistants yet; `quarry assistant create NAME --kb BASE` makes one\n");
      const names = await baseNames(client);
      for (const a of assistants) process.stdout.write(`${a.name}\t${a.id}\t${a.knowledgeBases.map((m) => `${names.get(m.knowledgeBase) ?? m.knowledgeBase}:${m.topK}:${m.priority}`).join(", ")}\n`);
    });
  assistant
    .command("show")
    .argument("<assistant>", "id or name")
    .addOption(urlOption())
    .action(async (name: string, o: { url: string }) => {
      const client = gatewayClient(o.url);
      process.stdout.write(describeAssistant((await client.getAssistant({ assistant: name })).assistant!, await baseNames(client)));
    });
  configOptions(assistant.command("update").argument("<assistant>", "id or name").option("--name <new-name>", "rename it")).action(async (name: string, o: AssistantOptions) => {
    const client = gatewayClient(o.url);
    const current = (await client.getAssistant({ assistant: name })).assistant!;
    const res = await client.updateAssistant({ assistant: current.id, update: applyOptions(current, o) });
    process.stdout.write(`updated ${describeAssistant(res.assistant!, await baseNames(client))}`);
  });
  assistant
    .command("delete")
    .argument("<assistant>", "id or name")
    .addOption(urlOption())
    .action(async (name: string, o: { url: string }) => {
      const { correctionsKnowledgeBaseId } = await gatewayClient(o.url).deleteAssistant({ assistant: name });
      process.stdout.write(`deleted ${name}${correctionsKnowledgeBaseId ? ` and its corrections knowledge base ${correctionsKnowledgeBaseId}` : ""}\n`);
    });

  const conversations = program.command("conversations").description("conversations held with `quarry chat` (or Chat)");
  conversations
    .command("list")
    .option("--assistant <assistant>", "only this assistant's")
    .addOption(urlOption())
    .action(async (o: { assistant?: string; url: string }) => {
      const { conversations: list } = await gatewayClient(o.url).listConversations({ assistant: o.assistant ?? "" });
      if (list.length === 0) process.stdout.write("no conversations yet; `quarry chat --kb NAME` starts one\n");
      for (const c of list) process.stdout.write(`${c.id}\t${when(c.updatedAt)}\t${c.turnCount} turn(s)\t${c.title}\n`);
    });
  conversations
    .command("show")
    .argument("<id>")
    .addOption(urlOption())
    .action(async (id: string, o: { url: string }) => {
      const { conversation, turns } = await gatewayClient(o.url).getConversation({ conversationId: id });
      const c = conversation!;
      process.stdout.write(`${c.id} — ${c.title}\n${c.assistantId ? `assistant ${c.assistantId}` : `knowledge bases ${c.knowledgeBaseIds.join(", ")}`}, ${c.turnCount} turn(s)\n\n`);
      for (const t of turns) process.stdout.write(`#${t.number} (${t.id})\n> ${t.question}\n${t.answer}\n\n`);
    });
  conversations
    .command("delete")
    .argument("<id>")
    .addOption(urlOption())
    .action(async (id: string, o: { url: string }) => {
      await gatewayClient(o.url).deleteConversation({ conversationId: id });
      process.stdout.write(`deleted ${id}\n`);
    });

  program
    .command("turn")
    .description("a turn's provenance")
    .command("show")
    .argument("<id>", "the turn's id (tn_…)")
    .option("--json", "the whole record as protobuf JSON")
    .addOption(urlOption())
    .action(async (id: string, o: { json?: boolean; url: string }) => {
      const turn = (await gatewayClient(o.url).getTurn({ turnId: id })).turn!;
      process.stdout.write(o.json ? `${toJsonString(TurnSchema, turn, { prettySpaces: 2 })}\n` : describeTurn(turn));
    });

  program
    .command("chat")
    .description("a conversation: one question per line on stdin, answers stream back with their sources")
    .option("--assistant <assistant>", "ask this assistant (id or name)")
    .option("--kb <names...>", "or these knowledge bases")
    .option("--conversation <id>", "resume this conversation")
    .addOption(new Option("--mode <mode>", "retrieval mode").choices(MODES))
    .option("--top-k <n>", "chunks to retrieve", wholeNumber)
    .addOption(urlOption())
    .action(async (o: { assistant?: string; kb?: string[]; conversation?: string; mode?: ModeName; topK?: number; url: string }) => {
      if (!o.assistant && !o.kb?.length && !o.conversation) throw new InvalidArgumentError("name an --assistant, --kb bases, or a --conversation to resume");
      await chatSession(gatewayClient(o.url), {
        assistant: o.assistant,
        knowledgeBases: o.kb ?? [],
        conversationId: o.conversation,
        mode: o.mode ? MODE_BY_NAME[o.mode] : undefined,
        topK: o.topK,
        input: process.stdin,
        out: process.stdout,
        interactive: Boolean(process.stdin.isTTY),
        onError: (error) => {
          process.stderr.write(`quarry: ${reportLine(error)}\n`);
          process.exitCode = 1;
        },
      });
    });
}

async function baseNames(client: ReturnType<typeof gatewayClient>): Promise<Map<string, string>> {
  try {
    return new Map((await client.listKnowledgeBases({})).knowledgeBases.map((kb) => [kb.id, kb.name]));
  } catch {
    // Names are a courtesy; the ids are shown regardless.
    return new Map();
  }
}
