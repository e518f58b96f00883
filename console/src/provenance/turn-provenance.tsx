// "Debug this turn": how a stored turn's answer came about (GetTurn) — the query retrieval searched
// and why, the settings and thresholds it ran with, each knowledge base's candidates with their
// ranks and scores, their fusion, the numbered context, the model and the time each stage took.
import { QueryRewrite, type Turn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { offers, quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { TraceLink, useTraceViewerUrl } from "../components/trace-link.tsx";
import { modeLabel, REWRITE_MODES } from "../retrieval-modes.ts";
import { useLoad } from "../use-load.ts";
import { CandidateLists, FusedTable } from "./candidates.tsx";
import { RetrievalDebugger } from "./retrieval-debugger.tsx";
import { StageTimings } from "./stage-timings.tsx";

const REWRITE_WORDS: Record<QueryRewrite, string> = {
  [QueryRewrite.UNSPECIFIED]: "as asked",
  [QueryRewrite.FIRST_TURN]: "first turn",
  [QueryRewrite.REWRITTEN]: "rewritten",
  [QueryRewrite.NO_MODEL]: "as asked (no chat model)",
  [QueryRewrite.FAILED]: "as asked (rewrite failed)",
  [QueryRewrite.PREVIOUS_TERMS]: "with the previous question's words (no chat model)",
};

export function TurnProvenance({ turnId, children }: { turnId: string; children?: (turn: Turn) => React.ReactNode }) {
  const loaded = useLoad(async () => {
    const [turn, bases] = await Promise.all([quarry.getTurn({ turnId }), quarry.listKnowledgeBases({})]);
    return { turn: turn.turn!, bases: bases.knowledgeBases };
  }, [turnId]);
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!loaded.data) return <p className="muted small">Loading the turn's provenance…</p>;
  const { turn, bases } = loaded.data;
  return (
    <section className="provenance" aria-label={`Provenance of turn ${turn.number}`}>
      <ProvenanceBody turn={turn} bases={bases} />
      {offers("debugRetrieval") && <RetrievalDebugger turnId={turn.id} />}
      {children?.(turn)}
    </section>
  );
}

function ProvenanceBody({ turn, bases }: { turn: Turn; bases: KnowledgeBase[] }) {
  const p = turn.provenance;
  const traceViewerUrl = useTraceViewerUrl();
  if (!p) return <p className="muted">This turn was stored without its provenance.</p>;
  const baseName = (id: string) => bases.find((b) => b.id === id)?.name ?? (id || "all named bases");
  const s = p.retrieval;
  const fileOf = new Map<string, string>();
  for (const list of p.lists) for (const h of list.hits) fileOf.set(h.chunkId, h.fileName);
  return (
    <>
      <h3>Query</h3>
      <dl className="facts">
        <div>
          <dt>asked</dt>
          <dd>{turn.question}</dd>
        </div>
        <div>
          <dt>searched</dt>
          <dd data-testid="retrieval-query">{p.retrievalQuery}</dd>
        </div>
        <div>
          <dt>rewrite</dt>
          <dd>
            {REWRITE_WORDS[p.rewrite]}
            {p.rewriteNote && <span className="muted"> — {p.rewriteNote}</span>}
          </dd>
        </div>
        {p.answered !== undefined && (
          <div>
            <dt>answered</dt>
            <dd data-testid="answered">
              {p.answered ? "yes" : "no: the knowledge bases do not answer this"}
              <span className="muted"> — {p.answeredReason}</span>
            </dd>
          </div>
        )}
        {p.correctionsUsed.length > 0 && (
          <div>
            <dt>corrections</dt>
            <dd data-testid="corrections-used">answered from {p.correctionsUsed.length} managed correction(s) that matched the question</dd>
          </div>
        )}
        {p.historyTurns > 0 && (
          <div>
            <dt>history</dt>
            <dd>{p.historyTurns} earlier turn(s)</dd>
          </div>
        )}
        {p.traceId && (
          <div>
            <dt>trace</dt>
            <dd data-testid="turn-trace">
              <TraceLink traceId={p.traceId} viewerUrl={traceViewerUrl} label="open the turn's trace" />
            </dd>
          </div>
        )}
      </dl>
      <h3>Settings and thresholds</h3>
      <p className="settings-line" data-testid="settings">
        {modeLabel(s?.mode ?? 0)} · top k {s?.topK || 8} · min score {(s?.minScore ?? 0).toFixed(2)} · rerank {p.rerank ? "on" : "off"} · query rewrite {REWRITE_MODES.find((m) => m.value === p.rewriteMode)?.label ?? "default"}
        {p.hideFileNames && " · file names hidden from the model"}
        {s && s.neighbourChunks > 0 && ` · ${s.neighbourChunks} neighbour chunk(s)`}
      </p>
      <h3>Candidates</h3>
      <CandidateLists lists={p.lists} baseName={baseName} />
      <h3>Fusion</h3>
      <p className="small">{p.fusionRule || "one list: its own order"}</p>
      <FusedTable fused={p.fused} fileOf={(id) => fileOf.get(id) ?? id} baseName={baseName} />
      <h3>Context</h3>
      <ol className="context-list" aria-label="context">
        {p.context.map((c) => (
          <li key={c.number}>
            <span className="cite static">{c.number}</span> {c.fileName}
            {c.page > 0 && ` · page ${c.page}`}
            {c.sectionPath.length > 0 && ` · ${c.sectionPath.join(" › ")}`} <span className="muted small">· {c.tokens} tokens</span>
          </li>
        ))}
      </ol>
      <p className="small muted">
        {p.contextTokens} context tokens · {p.extractive ? "extractive answer" : p.model}
        {p.usage && ` · ${p.usage.promptTokens} prompt + ${p.usage.completionTokens} completion tokens`} · markers used [{p.markersUsed.join(", ")}]
        {p.markersDropped.length > 0 && `, dropped [${p.markersDropped.join(", ")}]`} · {p.unsupportedMarkers} unsupported
      </p>
      {p.error && <p className="error">{p.error}</p>}
      <h3>Timings</h3>
      <StageTimings stages={p.stages} total={p.durationMs} />
    </>
  );
}
