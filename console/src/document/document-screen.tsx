// One document opened: its chunks in order with section and page, a search within it, and per
// chunk the corrections (edit, disable, enable), plus a chunk added by hand. Every change goes to
// the gateway and the list is read again, so what shows is what search now sees.
import { useState } from "react";
import type { Chunk } from "../../../gen/quarry/common/v1/common_pb.ts";
import { offers, quarry } from "../api/client.ts";
import { Crumbs } from "../components/crumbs.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { queryTerms } from "../components/highlight.tsx";
import { TraceLink, useTraceViewerUrl } from "../components/trace-link.tsx";
import { formatCount, STATUS_LABELS } from "../format.ts";
import { useDebounced } from "../preview/use-debounced.ts";
import { DocumentSource } from "../sources/document-source.tsx";
import { useLoad } from "../use-load.ts";
import { AddChunkForm } from "./add-chunk-form.tsx";
import { ChunkEditor, type ChunkActions } from "./chunk-editor.tsx";

export function DocumentScreen({ knowledgeBase, documentId }: { knowledgeBase: string; documentId: string }) {
  const [query, setQuery] = useState("");
  const settled = useDebounced(query.trim(), 250);
  const opened = useLoad(() => quarry.listDocumentChunks({ documentId, query: settled }), [documentId, settled]);
  const doc = opened.data?.document;
  const traceViewerUrl = useTraceViewerUrl();
  const chunks = opened.data?.chunks ?? [];
  const actions: ChunkActions = {
    edit: async (chunk, text) => {
      await quarry.editChunk({ documentId, chunkId: chunk.id, text, expectedVersion: chunk.version });
      opened.reload();
    },
    setEnabled: async (chunk, enabled) => {
      await quarry.setChunkEnabled({ documentId, chunkId: chunk.id, enabled });
      opened.reload();
    },
  };
  // Counted over the whole document, so not while a search narrows the list.
  const counts = settled ? "" : summarise(chunks);
  return (
    <section className="screen">
      <Crumbs
        trail={[
          { label: "Knowledge bases", path: "/" },
          { label: knowledgeBase, path: kbPath(knowledgeBase) },
        ]}
      />
      <div className="screen-head">
        <h1>{doc?.fileName ?? documentId}</h1>
        {doc && (
          <p className="muted">
            {STATUS_LABELS[doc.status]} · {formatCount(opened.data!.total)} chunks{counts && ` · ${counts}`}
            {!doc.enabled && " · document disabled"}
            {doc.traceId && (
              <>
                {" · "}
                <TraceLink traceId={doc.traceId} viewerUrl={traceViewerUrl} label="ingestion trace" />
              </>
            )}
          </p>
        )}
      </div>
      <ErrorNote error={opened.error} />
      {doc && offers("listSources") && <DocumentSource knowledgeBase={knowledgeBase} doc={doc} />}
      {doc?.chunkEdits && (
        <p className="muted" role="note">
          Hand corrections after this version's re-ingest: {doc.chunkEdits}
        </p>
      )}
      <label className="search-within">
        Search within the document
        <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Words or a phrase the chunk contains" />
      </label>
      {opened.data && settled && (
        <p className="muted" role="status">
          {chunks.length} of {opened.data.total} chunks contain “{settled}”
        </p>
      )}
      <div className="chunk-list">
        {chunks.map((chunk) => (
          <ChunkEditor key={`${chunk.id}:${chunk.version}:${chunk.disabled}`} chunk={chunk} terms={queryTerms(settled)} actions={actions} />
        ))}
      </div>
      {opened.data && !settled && (
        <AddChunkForm
          onAdd={async (text, sectionPath) => {
            await quarry.addChunk({ documentId, text, sectionPath });
            opened.reload();
          }}
        />
      )}
    </section>
  );
}

export function kbPath(knowledgeBase: string): string {
  return `/kb/${encodeURIComponent(knowledgeBase)}`;
}

export function documentPath(knowledgeBase: string, documentId: string): string {
  return `${kbPath(knowledgeBase)}/doc/${encodeURIComponent(documentId)}`;
}

function summarise(chunks: Chunk[]): string {
  const parts = [
    [chunks.filter((c) => c.edited).length, "edited"],
    [chunks.filter((c) => c.manual).length, "added by hand"],
    [chunks.filter((c) => c.disabled).length, "disabled"],
  ] as const;
  return parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`).join(" · ");
}
