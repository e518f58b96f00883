// The chunks the answer cites: file, page, section, score and snippet; the chosen one is marked.
import { useEffect, useRef } from "react";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { ScoreBadge } from "../components/score-badge.tsx";

export function SourcesPanel({ citations, selected }: { citations: Citation[]; selected?: number }) {
  const chosen = useRef<HTMLLIElement>(null);
  useEffect(() => {
    chosen.current?.scrollIntoView({ block: "nearest" });
  }, [selected]);
  return (
    <aside className="sources" aria-label="Sources">
      <h2>Sources</h2>
      {citations.length === 0 && <p className="muted">The cited passages appear here.</p>}
      <ol>
        {citations.map((c) => (
          <li key={c.marker} ref={c.marker === selected ? chosen : undefined} className={c.marker === selected ? "selected" : ""} data-marker={c.marker}>
            <header>
              <span className="cite static">{c.marker}</span>
              <strong className="file">{c.fileName}</strong>
              <ScoreBadge score={c.score} title="retrieval score" />
            </header>
            <p className="muted small">
              {c.page > 0 && <>page {c.pageEnd > c.page ? `${c.page}–${c.pageEnd}` : c.page} · </>}
              {c.sectionPath.length > 0 ? c.sectionPath.join(" › ") : "no section"}
            </p>
            <p className="snippet">{c.snippet}</p>
          </li>
        ))}
      </ol>
    </aside>
  );
}
