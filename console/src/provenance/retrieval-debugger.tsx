// "Why wasn't this found?": reruns the turn's retrieval (DebugRetrieval) and follows the chunks that
// hold an expected text through every list and stage, saying where each was lost.
import { useState } from "react";
import type { RetrievalDebugReport } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { RetrievalLoss, type ChunkTrace, type ListPosition } from "../../../gen/quarry/answer/v1/retrieval_debug_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { useAction } from "../use-action.ts";

const LOSS_WORDS: Record<RetrievalLoss, string> = {
  [RetrievalLoss.UNSPECIFIED]: "unknown",
  [RetrievalLoss.NONE]: "reached the context",
  [RetrievalLoss.NOT_IN_KNOWLEDGE_BASE]: "not in the knowledge bases",
  [RetrievalLoss.NOT_SEARCHABLE]: "stored but not searchable",
  [RetrievalLoss.NOT_RETRIEVED]: "not retrieved",
  [RetrievalLoss.FUSION]: "lost in fusion",
  [RetrievalLoss.MIN_SCORE]: "under the score threshold",
  [RetrievalLoss.TOP_K]: "below top k",
  [RetrievalLoss.RERANK]: "dropped by the reranker",
  [RetrievalLoss.CONTEXT_BUDGET]: "over the context budget",
  [RetrievalLoss.DUPLICATE]: "left out as a duplicate",
};

export function RetrievalDebugger({ turnId }: { turnId: string }) {
  const [expected, setExpected] = useState("");
  const [report, setReport] = useState<RetrievalDebugReport>();
  const { busy, error, run: act } = useAction();

  const run = (e: React.FormEvent) => {
    e.preventDefault();
    void act(async () => setReport((await quarry.debugRetrieval({ turnId, expect: { text: expected.trim() } })).report));
  };

  return (
    <div className="debugger">
      <h3>Why wasn't this found?</h3>
      <form className="debug-form" aria-label="Debug retrieval" onSubmit={run}>
        <label>
          Expected text
          <input value={expected} onChange={(e) => setExpected(e.target.value)} placeholder="A phrase the answer should have come from" />
        </label>
        <button type="submit" className="primary" disabled={busy || !expected.trim()}>
          {busy ? "Rerunning…" : "Rerun retrieval"}
        </button>
      </form>
      <ErrorNote error={error} />
      {report && <DebugReport report={report} />}
    </div>
  );
}

function DebugReport({ report: r }: { report: RetrievalDebugReport }) {
  return (
    <div className="debug-report" role="status" aria-label="debug report" data-loss={RetrievalLoss[r.loss]}>
      <p className={`verdict loss-${r.loss === RetrievalLoss.NONE ? "none" : "lost"}`}>
        <strong>{LOSS_WORDS[r.loss]}</strong>
        {r.verdict && ` — ${r.verdict}`}
      </p>
      <p className="small muted">
        searched “{r.query}” · {r.existenceNote || (r.exists ? "held by the knowledge bases" : "not held")} · {r.matchingChunks} matching chunk(s) ·{" "}
        {r.sameContextAsTurn ? "same context as the turn" : "the context differs from the turn's (the index changed since)"} · {r.durationMs.toFixed(0)} ms
      </p>
      {r.chunks.map((t) => (
        <TraceView key={t.chunk?.chunkId} trace={t} />
      ))}
    </div>
  );
}

function TraceView({ trace: t }: { trace: ChunkTrace }) {
  const c = t.chunk;
  return (
    <div className="trace" aria-label={`trace of ${c?.fileName} chunk ${c?.chunkIndex}`}>
      <p className="small">
        <strong>{c?.fileName}</strong> · chunk {c?.chunkIndex}
        {c && !c.enabled && <span className="warn"> · document disabled</span>} · {LOSS_WORDS[t.loss]}
        {t.contextNumber > 0 && ` · context [${t.contextNumber}]`}
        {t.retrievedRank > 0 && ` · retrieved #${t.retrievedRank}`}
      </p>
      {c?.snippet && <p className="snippet">{c.snippet}</p>}
      {t.verdict && <p className="small">{t.verdict}</p>}
      <ul className="positions">
        {t.lists.map((l, i) => (
          <li key={i} className={l.inWindow ? "in" : "out"}>
            {positionText(l)}
          </li>
        ))}
      </ul>
    </div>
  );
}

function positionText(l: ListPosition): string {
  const rank = l.rank ? `#${l.rank}` : "not ranked";
  const score = l.score !== undefined ? ` · ${l.score.toFixed(3)}` : "";
  const last = l.windowLastScore !== undefined ? ` (last kept ${l.windowLastScore.toFixed(3)})` : "";
  return `${l.list}: ${rank}${score} of ${l.window} kept${last}${l.inWindow ? "" : " — outside"}${l.note ? ` · ${l.note}` : ""}`;
}
