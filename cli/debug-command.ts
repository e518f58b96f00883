// `quarry debug`: "why wasn't this found?" — DebugRetrieval for a stored turn or an ad-hoc query,
// printed for a person (or as protobuf JSON with --json).
import { create, toJsonString } from "@bufbuild/protobuf";
import { InvalidArgumentError, Option, type Command } from "commander";
import { RetrievalDebugReportSchema, RetrievalSettingsSchema, type RetrievalDebugReport } from "../gen/quarry/answer/v1/answer_pb.ts";
import { ExpectationMatch, RankSource, RetrievalLoss, type ChunkTrace, type ListPosition } from "../gen/quarry/answer/v1/retrieval_debug_pb.ts";
import { DocumentStatus, RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { gatewayClient } from "../client/gateway-client.ts";
import { addRetrievalFlags, retrievalSettingsOf, type RetrievalFlags } from "../client/retrieval-flags.ts";
import { MODE_BY_NAME, MODES, type ModeName } from "./commands.ts";

interface DebugOptions extends RetrievalFlags {
  expect?: string;
  chunk?: string;
  document?: string;
  kb?: string[];
  assistant?: string;
  query?: string;
  mode?: ModeName;
  topK?: number;
  minScore?: number;
  deep?: number;
  json?: boolean;
  url: string;
}

const enumName = (value: string) => value.toLowerCase().replace(/_/g, " ");

function positive(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`It must be a whole number from 1 to ${max}.`);
    return n;
  };
}

function score(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError("It must be a number of at least 0.");
  return n;
}

/** Scores span BM25's tens and RRF's thousandths: enough digits to tell two apart either way. */
const shown = (score: number) => (Math.abs(score) >= 1 ? score.toFixed(3) : score.toPrecision(3));

function describePosition(p: ListPosition, searched: string): string {
  const where = p.knowledgeBaseId ? ` ${p.knowledgeBaseId}` : "";
  const scored = p.score === undefined ? "" : ` (score ${shown(p.score)})`;
  const last = p.windowLastScore === undefined ? "" : `; #${p.window} scores ${shown(p.windowLastScore)}`;
  let place: string;
  switch (p.source) {
    case RankSource.CANDIDATES:
    case RankSource.DEEP_SEARCH:
      place = p.list === "fused" ? `rank ${p.rank}, top-k ${p.window}` : p.inWindow ? `rank ${p.rank} of the ${p.window} fetched` : `rank ${p.rank}, below the ${p.window} fetched`;
      break;
    case RankSource.DIRECT_SCORE:
      place = `not within the deep search, ${p.note}`;
      break;
    default:
      place = `absent${p.note ? ` (${p.note})` : ""}`;
  }
  const how = p.source === RankSource.DEEP_SEARCH ? " [deeper search]" : p.source === RankSource.CANDIDATES ? " [as fetched]" : "";
  // A query variant (multi-query) differs from what was searched; the search itself needs no repeating.
  return `  ${p.list.padEnd(6)}${where}: ${place}${scored}${last}${how}${p.query && p.query !== searched ? `  — query ${JSON.stringify(p.query)}` : ""}`;
}

function describeTrace(t: ChunkTrace, searched: string): string[] {
  const c = t.chunk!;
  const status = c.documentStatus ? enumName(DocumentStatus[c.documentStatus].replace(/^DOCUMENT_STATUS_/, "")) : "unknown";
  const out = [
    `chunk ${c.chunkId} (${c.fileName || c.documentId}, chunk ${c.chunkIndex}, knowledge base ${c.knowledgeBaseId}) — ${enumName(ExpectationMatch[c.match])} match, document ${status}${c.enabled ? "" : ", DISABLED"}`,
  ];
  if (c.snippet) out.push(`  "${c.snippet.replace(/\s+/g, " ")}"`);
  out.push(...t.lists.map((p) => describePosition(p, searched)));
  const reached = [
    t.rerankCandidateRank ? `rerank candidate #${t.rerankCandidateRank}${t.rerankScore === undefined ? "" : ` (rerank score ${shown(t.rerankScore)})`}` : "",
    t.retrievedRank ? `retrieved #${t.retrievedRank}` : "not retrieved",
    t.contextNumber ? `in the context as [${t.contextNumber}]` : "not in the context",
  ].filter(Boolean);
  out.push(`  ${reached.join("; ")}`);
  if (t.turnContextNumber || t.turnFusedRank) out.push(`  in the turn: ${t.turnFusedRank ? `fused #${t.turnFusedRank}` : "not fused"}, ${t.turnContextNumber ? `context [${t.turnContextNumber}]` : "not in the context"}`);
  out.push(`  → ${enumName(RetrievalLoss[t.loss])}: ${t.verdict}`);
  return out;
}

/** The report for a person: the verdict first, then how it was reached. */
export function describeReport(r: RetrievalDebugReport): string {
  const s = r.settings;
  const mode = (Object.entries(MODE_BY_NAME).find(([, v]) => v === s?.mode)?.[0] ?? "hybrid") as ModeName;
  const expected = [r.expect?.text ? `text ${JSON.stringify(r.expect.text)}` : "", r.expect?.chunkId ? `chunk ${r.expect.chunkId}` : "", r.expect?.documentId ? `document ${r.expect.documentId}` : ""].filter(Boolean).join(", ");
  const out = [
    `verdict: ${r.verdict}`,
    `${r.turnId ? `turn ${r.turnId}: ` : ""}searched for ${JSON.stringify(r.query)} in ${r.knowledgeBaseIds.join(", ")}${r.assistantId ? ` (assistant ${r.assistantId})` : ""}`,
    `settings: ${mode}, top-k ${s?.topK ?? 0}, min score ${s?.minScore ?? 0}${s?.rerank ? ", rerank" : ""}${s?.neighbourChunks ? `, ${s.neighbourChunks} neighbour(s)` : ""}; deep searches to rank ${r.deepWindow}`,
    `expected: ${expected} — ${r.exists ? "in the knowledge base" : "NOT in the knowledge base"} (${r.existenceNote})`,
  ];
  for (const t of r.chunks) out.push("", ...describeTrace(t, r.query));
  if (r.matchingChunks > r.chunks.length) out.push("", `(${r.matchingChunks - r.chunks.length} more chunk(s) hold it; the ${r.chunks.length} that got furthest are shown)`);
  out.push("", `the rerun retrieved ${r.retrieved.length} hit(s); context ${r.context.length} chunk(s), ${r.contextTokens} tokens${r.turnId ? (r.sameContextAsTurn ? " — the same as the turn's" : " — NOT the same as the turn's (the index or the settings changed)") : ""}`);
  for (const c of r.context) out.push(`  [${c.number}] ${c.fileName} ${c.chunkId}`);
  if (r.notes?.degraded) out.push(`degraded: ${r.notes.degraded}`);
  if (r.notes?.rerankSkipped) out.push(`rerank skipped: ${r.notes.rerankSkipped}`);
  return `${out.join("\n")}\n`;
}

export function registerDebugCommand(program: Command, urlOption: () => Option): void {
  addRetrievalFlags(
    program
      .command("debug")
      .description("why wasn't it found? rerun a turn's (or a query's) retrieval and follow the expected text, chunk or document through it")
      .argument("[turn]", "a stored turn's id (tn_…); or give --query with --kb or --assistant")
      .option("--expect <text>", "the text retrieval should have found")
      .option("--chunk <id>", "the chunk retrieval should have found")
      .option("--document <id>", "the document retrieval should have found")
      .option("--query <text>", "an ad-hoc query (instead of a turn)")
      .option("--kb <names...>", "knowledge base(s) for --query")
      .option("--assistant <assistant>", "or an assistant for --query")
      .addOption(new Option("--mode <mode>", "override the retrieval mode").choices(MODES))
      .option("--top-k <n>", "override top-k", positive(1000))
      .option("--min-score <x>", "override the minimum score", score)
      .option("--deep <n>", "how deep to search a list for a chunk it did not fetch (default 500)", positive(1000))
      .option("--json", "the whole report as protobuf JSON")
      .addOption(urlOption()),
  ).action(async (turn: string | undefined, o: DebugOptions) => {
    if (!o.expect && !o.chunk && !o.document) throw new InvalidArgumentError("say what should have been found: --expect TEXT, --chunk ID or --document ID");
    if (!turn && !o.query) throw new InvalidArgumentError("name a turn (quarry debug tn_… --expect TEXT) or give --query with --kb or --assistant");
    const { $typeName: _type, $unknown: _unknown, ...flags } = retrievalSettingsOf(o);
    const settings = create(RetrievalSettingsSchema, { ...flags, mode: o.mode ? MODE_BY_NAME[o.mode] : RetrievalMode.UNSPECIFIED, topK: o.topK ?? 0, minScore: o.minScore ?? 0 });
    const { report } = await gatewayClient(o.url).debugRetrieval({
      turnId: turn ?? "",
      query: o.query ?? "",
      knowledgeBases: o.kb ?? [],
      assistant: o.assistant ?? "",
      settings,
      expect: { text: o.expect ?? "", chunkId: o.chunk ?? "", documentId: o.document ?? "" },
      deepWindow: o.deep ?? 0,
    });
    process.stdout.write(o.json ? `${toJsonString(RetrievalDebugReportSchema, report!, { prettySpaces: 2 })}\n` : describeReport(report!));
  });
}
