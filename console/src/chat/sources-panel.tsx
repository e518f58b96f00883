// The chunks the answer cites: file, page, section, score and snippet; the chosen one is marked.
// A source expands to its whole chunk and the chunks around it. When the answer abstained, the
// passages are the closest the search found, and are labelled so: they answer nothing.
import { useEffect, useRef, useState } from "react";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { offers } from "../api/client.ts";
import { ScoreBadge } from "../components/score-badge.tsx";
import { ChunkInContext } from "./chunk-in-context.tsx";

export function SourcesPanel({ citations, selected, closest = false }: { citations: Citation[]; selected?: number; closest?: boolean }) {
  const chosen = useRef<HTMLLIElement>(null);
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const toggle = (chunkId: string) =>
    setExpanded((e) => {
      const next = new Set(e);
      if (!next.delete(chunkId)) next.add(chunkId);
      return next;
    });
  useEffect(() => {
    chosen.current?.scrollIntoView({ block: "nearest" });
  }, [selected]);
  return (
    <aside className="sources" aria-label="Sources">
      <h2>{closest ? "Closest passages — not an answer" : "Sources"}</h2>
      {citations.length === 0 && <p className="muted">The cited passages appear here.</p>}
      <ol>
        {citations.map((c, i) => (
          // A marker can cite several children of one parent (each its own citation), so the marker alone is no key.
          <li key={`${c.marker}:${c.chunkId}:${i}`} ref={c.marker === selected ? chosen : undefined} className={c.marker === selected ? "selected" : ""} data-marker={c.marker}>
            <header>
              <span className="cite static">{c.marker}</span>
              <strong className="file">{c.fileName}</strong>
              <ScoreBadge score={c.score} title="retrieval score" />
            </header>
            {closest && <p className="closest-label small">closest, not an answer</p>}
            <p className="muted small">
              {c.page > 0 && <>page {c.pageEnd > c.page ? `${c.page}–${c.pageEnd}` : c.page} · </>}
              {c.sectionPath.length > 0 ? c.sectionPath.join(" › ") : "no section"}
            </p>
            {expanded.has(c.chunkId) ? <ChunkInContext citation={c} /> : <p className="snippet">{c.snippet}</p>}
            {offers("getChunkNeighbours") && c.chunkId && (
              <button type="button" className="link small" aria-expanded={expanded.has(c.chunkId)} onClick={() => toggle(c.chunkId)}>
                {expanded.has(c.chunkId) ? "Show the snippet" : "Show the whole chunk and its neighbours"}
              </button>
            )}
          </li>
        ))}
      </ol>
    </aside>
  );
}
