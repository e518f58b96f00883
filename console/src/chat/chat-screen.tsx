import { useState } from "react";
import { KnowledgeBasePicker } from "../components/knowledge-base-picker.tsx";
import { AnswerText } from "./answer-text.tsx";
import { QuestionBox } from "./question-box.tsx";
import { SourcesPanel } from "./sources-panel.tsx";
import { useChat, type Turn } from "./use-chat.ts";

export function ChatScreen() {
  const [bases, setBases] = useState<string[]>([]);
  const chat = useChat();
  const [selected, setSelected] = useState<{ turn: number; marker: number }>();
  const last = chat.turns.length - 1;
  const sourcesTurn = selected?.turn ?? last;
  return (
    <section className="screen chat-screen">
      <div className="screen-head">
        <h1>Chat</h1>
      </div>
      <KnowledgeBasePicker value={bases} onChange={setBases} />
      <div className="chat-layout">
        <div className="conversation">
          {chat.turns.length === 0 && <p className="empty">Ask about what the chosen knowledge bases hold. Answers cite their sources as [n].</p>}
          {chat.turns.map((turn, i) => (
            <TurnView key={i} turn={turn} onCite={(marker) => setSelected({ turn: i, marker })} />
          ))}
          <QuestionBox
            busy={chat.busy}
            disabled={bases.length === 0}
            onStop={chat.stop}
            onAsk={(q) => {
              setSelected(undefined);
              void chat.ask(q, bases);
            }}
          />
        </div>
        <SourcesPanel citations={chat.turns[sourcesTurn]?.citations ?? []} selected={selected?.turn === sourcesTurn ? selected.marker : undefined} />
      </div>
    </section>
  );
}

function TurnView({ turn, onCite }: { turn: Turn; onCite: (marker: number) => void }) {
  const f = turn.final;
  return (
    <div className="turn">
      <p className="question">{turn.question}</p>
      <div className="answer" aria-live="polite" aria-busy={turn.stage !== "done"}>
        {turn.stage === "retrieving" && !turn.answer && <p className="muted">Searching…</p>}
        <AnswerText text={turn.answer} citations={turn.citations} final={f} onCite={onCite} />
        {turn.error && <p className="error">{turn.error}</p>}
        {f && (
          <p className="muted small answer-meta">
            {f.extractive ? "extractive answer (no language model configured)" : f.model}
            {f.retrieval && ` · ${f.retrieval.chunksInContext} chunks in context`}
            {f.unsupportedMarkers > 0 && <span className="warn"> · {f.unsupportedMarkers} citation(s) not supported by their passage</span>}
            {f.droppedMarkers > 0 && ` · ${f.droppedMarkers} marker(s) that cited nothing were removed`}
          </p>
        )}
      </div>
    </div>
  );
}
