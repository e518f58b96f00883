import type { Chunk } from "../../../gen/quarry/common/v1/common_pb.ts";

export function ChunkCard({ chunk }: { chunk: Chunk }) {
  const pages = chunk.page === 0 ? undefined : chunk.pageEnd > chunk.page ? `pages ${chunk.page}–${chunk.pageEnd}` : `page ${chunk.page}`;
  return (
    <article className="card chunk" aria-label={`chunk ${chunk.index + 1}`}>
      <header className="chunk-head">
        <strong>#{chunk.index + 1}</strong>
        <span className="pill">{chunk.tokenCount} tokens</span>
        {pages && <span className="pill">{pages}</span>}
        {chunk.sectionPath.length > 0 && <span className="section-path">{chunk.sectionPath.join(" › ")}</span>}
      </header>
      <p className="chunk-text">{chunk.text}</p>
    </article>
  );
}
