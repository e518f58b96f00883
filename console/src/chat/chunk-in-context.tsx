// A cited chunk expanded in place: its whole text between the chunks before and after it in its
// document (GetChunkNeighbours), with a way to read further on each side.
import { useState } from "react";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { useLoad } from "../use-load.ts";

const MAX_NEIGHBOURS = 5;

export function ChunkInContext({ citation }: { citation: Citation }) {
  const [around, setAround] = useState(1);
  const loaded = useLoad(() => quarry.getChunkNeighbours({ documentId: citation.documentId, chunkId: citation.chunkId, neighbours: around }), [citation.chunkId, around]);
  const res = loaded.data;
  return (
    <div className="chunk-context" aria-label={`source ${citation.marker} in its document`} aria-busy={loaded.loading}>
      <ErrorNote error={loaded.error} />
      {res?.before.map((c) => (
        <p key={c.id} className="neighbour" data-index={c.index}>
          {c.text}
        </p>
      ))}
      {res?.chunk && (
        <p className="cited-chunk" data-index={res.chunk.index}>
          {res.chunk.text}
        </p>
      )}
      {res?.after.map((c) => (
        <p key={c.id} className="neighbour" data-index={c.index}>
          {c.text}
        </p>
      ))}
      {res && around < MAX_NEIGHBOURS && (res.before.length === around || res.after.length === around) && (
        <button type="button" className="link small" onClick={() => setAround((n) => n + 1)}>
          More context
        </button>
      )}
    </div>
  );
}
