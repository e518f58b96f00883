// The answer with each [n] as a chip that shows its source. A chip whose sentence the cited chunk
// does not support (the citation checks of the final event or the stored turn) is marked, as is one that cites nothing.
import { Fragment } from "react";
import type { CitationCheck } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";

export function AnswerText({ text, citations, checks, onCite }: { text: string; citations: Citation[]; checks: CitationCheck[]; onCite: (marker: number) => void }) {
  const parts = text.split(/\[(\d+)\]/);
  const occurrences = (parts.length - 1) / 2;
  let occurrence = 0;
  let offset = 0;
  return (
    <p className="answer-text">
      {parts.map((part, i) => {
        if (i % 2 === 0) {
          offset += part.length;
          return <Fragment key={i}>{part}</Fragment>;
        }
        const marker = Number(part);
        const at = offset;
        offset += part.length + 2;
        // The checks come one per marker occurrence, in order; if the counts differ, match by sentence.
        const check = checks.length === occurrences ? checks[occurrence] : checks.find((c) => c.marker === marker && c.sentenceStart <= at && at <= c.sentenceEnd + 1);
        occurrence++;
        const known = citations.some((c) => c.marker === marker);
        const unsupported = !known || check?.supported === false;
        const title = !known ? "no source for this marker" : unsupported ? "the cited passage does not support this sentence" : "show the source";
        return (
          <button key={i} type="button" className={`cite${unsupported ? " unsupported" : ""}`} title={title} aria-label={`citation ${marker}${unsupported ? " (unsupported)" : ""}`} onClick={() => onCite(marker)}>
            {marker}
          </button>
        );
      })}
    </p>
  );
}
