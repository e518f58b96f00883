// What a file would become before it is ingested: parsed and chunked by the real services, nothing
// stored. Changing the size or overlap chunks it again after a short pause.
import { useEffect, useState } from "react";
import type { PreviewChunksResponse } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError, isAbort } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { countOf, formatBytes, formatCount } from "../format.ts";
import { useLoad } from "../use-load.ts";
import { useReadableFormats } from "../documents/readable-formats.ts";
import { ChunkCard } from "./chunk-card.tsx";
import { useDebounced } from "./use-debounced.ts";

const MAX_CHUNKS = 100;

export function PreviewScreen() {
  const [file, setFile] = useState<{ name: string; type: string; bytes: Uint8Array }>();
  const readable = useReadableFormats();
  // Start from a knowledge base's chunking settings (its model counts the tokens), or the defaults.
  const [base, setBase] = useState("");
  const bases = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases), []);
  const [size, setSize] = useState<number>();
  const [overlap, setOverlap] = useState<number>();
  const settings = useDebounced({ size, overlap }, 300);
  const [result, setResult] = useState<PreviewChunksResponse>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  // Overlap stays under half a chunk, as the slider's own range does.
  const resize = (next: number) => {
    setSize(next);
    setOverlap((o) => Math.min(o ?? 0, Math.floor(next / 2)));
  };

  useEffect(() => {
    if (!file) return;
    const abort = new AbortController();
    setBusy(true);
    setError(undefined);
    const chosen = settings.size !== undefined ? { chunkSize: settings.size, chunkOverlap: settings.overlap ?? 0 } : undefined;
    quarry
      .previewChunks({ fileName: file.name, mimeType: file.type, content: file.bytes, settings: chosen, knowledgeBase: base, maxChunks: MAX_CHUNKS }, { signal: abort.signal })
      .then((res) => {
        setResult(res);
        // The first preview shows the defaults the chunker chose; the sliders start there.
        if (settings.size === undefined && res.settings) {
          setSize(res.settings.chunkSize);
          setOverlap(res.settings.chunkOverlap);
        }
      })
      .catch((e) => !isAbort(e) && setError(describeError(e)))
      .finally(() => !abort.signal.aborted && setBusy(false));
    return () => abort.abort();
  }, [file, base, settings.size, settings.overlap]);

  return (
    <section className="screen">
      <div className="screen-head">
        <h1>Chunk preview</h1>
        <p className="muted">Parse and chunk a file with any settings, storing nothing.</p>
      </div>
      <div className="panel preview-controls">
        <label>
          File
          <input
            type="file"
            aria-label="File to preview"
            accept={readable?.accept || undefined}
            onChange={async (e) => {
              const f = e.target.files?.[0];
              if (!f) return;
              setResult(undefined);
              setFile({ name: f.name, type: f.type, bytes: new Uint8Array(await f.arrayBuffer()) });
            }}
          />
        </label>
        <label>
          Settings from
          <select
            value={base}
            onChange={(e) => {
              setBase(e.target.value);
              // The sliders start again from what the chosen settings resolve to.
              setSize(undefined);
              setOverlap(undefined);
            }}
          >
            <option value="">the defaults</option>
            {bases.data?.map((kb) => (
              <option key={kb.id} value={kb.name}>
                {kb.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>
            Chunk size <output>{size ?? "—"}</output> tokens
          </span>
          <input type="range" min={32} max={1024} step={8} value={size ?? 256} disabled={size === undefined} aria-label="Chunk size" onChange={(e) => resize(Number(e.target.value))} />
        </label>
        <label>
          <span>
            Overlap <output>{overlap ?? "—"}</output> tokens
          </span>
          <input type="range" min={0} max={Math.max(0, Math.floor((size ?? 256) / 2))} step={4} value={overlap ?? 0} disabled={size === undefined} aria-label="Chunk overlap" onChange={(e) => setOverlap(Number(e.target.value))} />
        </label>
      </div>
      <ErrorNote error={error} />
      {!file && <p className="empty">Choose a file to see its chunks.</p>}
      {file && result && (
        <p className="summary" role="status">
          {file.name} ({formatBytes(file.bytes.byteLength)}): <strong data-testid="total-chunks">{formatCount(result.totalChunks)}</strong> {result.totalChunks === 1 ? "chunk" : "chunks"}, {countOf(result.totalTokens, "token")}
          {result.totalChunks > result.chunks.length && ` (first ${result.chunks.length} shown)`}
          {busy && " · re-chunking…"}
        </p>
      )}
      <div className="chunk-list">{result?.chunks.map((c) => <ChunkCard key={`${c.index}-${c.id}`} chunk={c} />)}</div>
    </section>
  );
}
