// A retrieval test: what a question finds, with each list's rank and score from the explanation.
import { useState } from "react";
import { FusionMethod, RetrievalMode } from "../../../gen/quarry/common/v1/common_pb.ts";
import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import type { SearchResponse } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { queryTerms } from "../components/highlight.tsx";
import { ModeSelect } from "../components/mode-select.tsx";
import { KnowledgeBasePicker } from "../components/knowledge-base-picker.tsx";
import { useAction } from "../use-action.ts";
import { HitCard } from "./hit-card.tsx";
import { ScoreLegend } from "./score-legend.tsx";

export function RetrievalScreen() {
  const [bases, setBases] = useState<string[]>([]);
  const [query, setQuery] = useState("");
  const [mode, setMode] = useState(RetrievalMode.HYBRID);
  const [topK, setTopK] = useState(10);
  const [threshold, setThreshold] = useState(0);
  const [fusion, setFusion] = useState(FusionMethod.RRF);
  const [result, setResult] = useState<{ query: string; res: SearchResponse; searched: KnowledgeBase[] }>();
  const { busy, error, run: act } = useAction();

  const run = (e: React.FormEvent) => {
    e.preventDefault();
    void act(async () => {
      // Each base's model decides what its vector scores mean (the bands of its recorded distribution).
      const [res, { knowledgeBases }] = await Promise.all([quarry.search({ query, knowledgeBases: bases, settings: { mode, topK, minScore: threshold, fusion } }), quarry.listKnowledgeBases({})]);
      setResult({ query, res, searched: knowledgeBases.filter((kb) => bases.includes(kb.name)) });
    });
  };

  const terms = result ? queryTerms(result.query) : [];
  const bandsOf = new Map(result?.searched.map((kb) => [kb.id, kb.vectorScoreBands]));
  return (
    <section className="screen">
      <div className="screen-head">
        <h1>Retrieval test</h1>
      </div>
      <form className="panel search-form" onSubmit={run} aria-label="Retrieval test">
        <KnowledgeBasePicker value={bases} onChange={setBases} />
        <label className="wide">
          Query
          <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="What are you looking for?" autoFocus />
        </label>
        <ModeSelect value={mode} onChange={setMode} />
        {mode === RetrievalMode.HYBRID && (
          <label>
            Fusion
            <select value={fusion} onChange={(e) => setFusion(Number(e.target.value))} title="How hybrid merges the keyword and vector lists">
              <option value={FusionMethod.RRF}>Reciprocal rank (default)</option>
              <option value={FusionMethod.CONVEX}>Convex, scores (α 0.8)</option>
            </select>
          </label>
        )}
        <label>
          Top k
          <input type="number" min={1} max={100} value={topK} onChange={(e) => setTopK(Number(e.target.value))} />
        </label>
        <label>
          Threshold
          <input type="number" min={0} max={1} step={0.05} value={threshold} onChange={(e) => setThreshold(Number(e.target.value))} />
        </label>
        <button type="submit" className="primary" disabled={busy || !query.trim() || bases.length === 0}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      <ErrorNote error={error} />
      {result && (
        <>
          <p className="summary" role="status">
            {result.res.hits.length} results in {result.res.tookMs.toFixed(0)} ms
          </p>
          <ScoreLegend bases={result.searched} />
        </>
      )}
      <div className="hits">
        {result?.res.hits.map((hit, i) => <HitCard key={hit.chunk?.id ?? i} hit={hit} rank={i + 1} terms={terms} bands={bandsOf.get(hit.chunk?.knowledgeBaseId ?? "")} />)}
      </div>
    </section>
  );
}
