// One question and its answer, with the answer's facts and the way into its provenance.
import { useState } from "react";
import { offers } from "../api/client.ts";
import { CorrectionForm } from "../corrections/correction-form.tsx";
import { TurnProvenance } from "../provenance/turn-provenance.tsx";
import { AnswerText } from "./answer-text.tsx";
import type { Turn } from "./use-chat.ts";

/** `correctable`: the conversation is held with an assistant, whose corrections a correction joins. */
export function TurnView({ turn, correctable, onCite }: { turn: Turn; correctable: boolean; onCite: (marker: number) => void }) {
  const [debugging, setDebugging] = useState(false);
  const [correcting, setCorrecting] = useState(false);
  const m = turn.meta;
  const done = turn.stage === "done";
  return (
    <div className="turn">
      <p className="question">{turn.question}</p>
      <div className="answer" aria-live="polite" aria-busy={!done}>
        {turn.stage === "retrieving" && !turn.answer && <p className="muted">Searching…</p>}
        {m && !m.answered && (
          <p className="abstained" role="status" data-testid="abstained">
            The selected knowledge bases do not answer this. <span className="muted small">The passages listed are the closest, not an answer ({m.answeredReason}).</span>
          </p>
        )}
        <AnswerText text={turn.answer} citations={turn.citations} checks={turn.checks} onCite={onCite} />
        {turn.error && <p className="error">{turn.error}</p>}
        {m && (
          <p className="muted small answer-meta">
            {m.extractive ? "extractive answer (no language model configured)" : m.model}
            {` · ${m.chunksInContext} chunks in context`}
            {m.unsupported > 0 && <span className="warn"> · {m.unsupported} citation(s) not supported by their passage</span>}
            {m.dropped > 0 && ` · ${m.dropped} marker(s) that cited nothing were removed`}
          </p>
        )}
        {done && turn.turnId && (
          <div className="turn-actions">
            <button type="button" className="link" aria-expanded={debugging} onClick={() => setDebugging((d) => !d)}>
              {debugging ? "Hide provenance" : "Debug this turn"}
            </button>
            {correctable && offers("correctAnswer") && (
              <button type="button" className="link" aria-expanded={correcting} onClick={() => setCorrecting((c) => !c)}>
                Correct this answer
              </button>
            )}
          </div>
        )}
      </div>
      {correcting && turn.turnId && <CorrectionForm turnId={turn.turnId} question={turn.question} answer={turn.answer} onClose={() => setCorrecting(false)} />}
      {debugging && turn.turnId && <TurnProvenance turnId={turn.turnId} />}
    </div>
  );
}
