// Each knowledge base's raw candidates (rank, score, the BM25 and vector lists' ranks and scores)
// and the fused ranking with the context number each got or why it was left out.
import type { CandidateList, FusedHit } from "../../../gen/quarry/answer/v1/answer_pb.ts";

export function CandidateLists({ lists, baseName }: { lists: CandidateList[]; baseName: (id: string) => string }) {
  if (lists.length === 0) return <p className="muted small">No list: retrieval did not run.</p>;
  return (
    <>
      {lists.map((list, i) => (
        <div key={i} className="candidate-list" aria-label={`candidates from ${baseName(list.knowledgeBaseId)}`}>
          <p className="small">
            <strong>{baseName(list.knowledgeBaseId)}</strong>
            {list.corrections ? " (managed corrections: a hit whose question matches ranks first)" : ` · priority ${list.priority}`} · top k {list.topK}
            {list.knownTokenShare !== undefined && ` · embedder reads ${(list.knownTokenShare * 100).toFixed(0)}% of the question`}
            {list.vectorWeight !== undefined && ` · vector weight ${list.vectorWeight.toFixed(2)}`}
          </p>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>file</th>
                  <th className="num">score</th>
                  <th className="num">BM25</th>
                  <th className="num">vector</th>
                  {list.corrections && <th>question match</th>}
                </tr>
              </thead>
              <tbody>
                {list.hits.map((h) => (
                  <tr key={h.chunkId}>
                    <td className="num">{h.rank}</td>
                    <td className="file-name">{h.fileName}</td>
                    <td className="num">{h.score.toFixed(4)}</td>
                    <td className="num">{h.explain?.bm25Rank ? `#${h.explain.bm25Rank} · ${h.explain.bm25Score.toFixed(3)}` : "—"}</td>
                    <td className="num">{h.explain?.vectorRank ? `#${h.explain.vectorRank} · ${h.explain.vectorScore.toFixed(3)}` : "—"}</td>
                    {list.corrections && (
                      <td data-testid="correction-match">
                        {h.correctionMatch
                          ? `${h.correctionMatch.relevant ? "matches" : "no match"} (${h.correctionMatch.method} ${h.correctionMatch.similarity.toFixed(2)}, threshold ${h.correctionMatch.threshold.toFixed(2)})`
                          : "—"}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ))}
    </>
  );
}

export function FusedTable({ fused, fileOf, baseName }: { fused: FusedHit[]; fileOf: (chunkId: string) => string; baseName: (id: string) => string }) {
  return (
    <div className="table-wrap">
      <table aria-label="fused ranking">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>file</th>
            <th>base</th>
            <th className="num">list rank</th>
            <th className="num">score</th>
            <th>context</th>
          </tr>
        </thead>
        <tbody>
          {fused.map((h) => (
            <tr key={h.rank}>
              <td className="num">{h.rank}</td>
              <td className="file-name">{fileOf(h.chunkId)}</td>
              <td>{baseName(h.knowledgeBaseId)}</td>
              <td className="num">{h.listRank}</td>
              <td className="num">{h.score.toFixed(4)}</td>
              <td>{h.correction ? "correction · " : ""}{h.contextNumber ? `[${h.contextNumber}]` : `left out${h.excludedReason ? `: ${h.excludedReason}` : ""}${h.duplicateOf ? ` of #${h.duplicateOf}` : ""}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
