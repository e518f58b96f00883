// Enter asks; Shift+Enter starts a new line.
import { useState } from "react";

export function QuestionBox({ onAsk, busy, onStop, disabled }: { onAsk: (q: string) => void; busy: boolean; onStop: () => void; disabled?: boolean }) {
  const [question, setQuestion] = useState("");
  const submit = () => {
    if (!question.trim() || busy || disabled) return;
    onAsk(question.trim());
    setQuestion("");
  };
  return (
    <form
      className="question-box"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <textarea
        aria-label="Question"
        rows={2}
        value={question}
        placeholder="Ask a question (Enter to send, Shift+Enter for a new line)"
        onChange={(e) => setQuestion(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            submit();
          }
        }}
      />
      {busy ? (
        <button type="button" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="primary" disabled={!question.trim() || disabled}>
          Ask
        </button>
      )}
    </form>
  );
}
