// One knowledge base's documents: upload, live ingestion progress, and the list.
import { useCallback, useEffect, useMemo, useState } from "react";
import { DocumentStatus, type Document } from "../../../gen/quarry/common/v1/common_pb.ts";
import { offers, quarry } from "../api/client.ts";
import { useCanEdit } from "../api/can-edit.ts";
import { describeError } from "../api/errors.ts";
import { Crumbs } from "../components/crumbs.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { countOf, formatCount, isSettled } from "../format.ts";
import { useLoad } from "../use-load.ts";
import { documentPath } from "../document/document-screen.tsx";
import { SourcesPanel } from "../sources/sources-panel.tsx";
import { useSources } from "../sources/use-sources.ts";
import { DocumentRow } from "./document-row.tsx";
import { StatusFilter, type StatusFilterValue } from "./status-filter.tsx";
import { uploadFile, type UploadOutcome } from "./upload-files.ts";
import { UploadZone } from "./upload-zone.tsx";
import { useIngestion } from "./use-ingestion.ts";

export function DocumentsScreen({ knowledgeBase }: { knowledgeBase: string }) {
  const kb = useLoad(() => quarry.getKnowledgeBase({ knowledgeBase }).then((r) => r.knowledgeBase!), [knowledgeBase]);
  const docs = useLoad(() => quarry.listDocuments({ knowledgeBase }).then((r) => r.documents), [knowledgeBase]);
  const reload = () => {
    kb.reload();
    docs.reload();
  };
  const ingestion = useIngestion(knowledgeBase, reload);
  // A finished sync (or a source removed with its documents) changed the documents: read them
  // again and follow the ones it queued.
  const { reload: reloadKb } = kb;
  const { reload: reloadDocs } = docs;
  const { watch } = ingestion;
  const afterSourceChange = useCallback(() => {
    reloadKb();
    reloadDocs();
    void watch([]);
  }, [reloadKb, reloadDocs, watch]);
  const sources = useSources(knowledgeBase, afterSourceChange);
  const sourceNames = useMemo(() => new Map((sources.sources ?? []).map((s) => [s.id, s.name])), [sources.sources]);
  const canEdit = useCanEdit(knowledgeBase);
  const [uploading, setUploading] = useState<string[]>([]);
  const [notes, setNotes] = useState<UploadOutcome[]>([]);
  const [filter, setFilter] = useState<StatusFilterValue>("all");
  const [error, setError] = useState<string>();

  // Documents still in the pipeline when the screen opens are followed too.
  const [watchedOnOpen, setWatchedOnOpen] = useState(false);
  useEffect(() => {
    if (watchedOnOpen || !docs.data) return;
    setWatchedOnOpen(true);
    if (docs.data.some((d) => !isSettled(d.status))) void ingestion.watch([]);
  }, [docs.data, watchedOnOpen, ingestion]);

  const upload = async (files: File[]) => {
    setNotes([]);
    setUploading((u) => [...u, ...files.map((f) => f.name)]);
    for (const file of files) {
      const outcome = await uploadFile(knowledgeBase, file);
      setUploading((u) => u.filter((name, i) => i !== u.indexOf(file.name)));
      if (outcome.error || outcome.unchanged) setNotes((n) => [...n, outcome]);
      if (outcome.document && !outcome.unchanged) void ingestion.watch([outcome.document.id]);
      docs.reload();
    }
  };

  const act = async (what: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await what();
      reload();
    } catch (e) {
      setError(describeError(e));
    }
  };

  // A re-ingest queues a new version of each document; its progress comes as an upload's does.
  const reingest = (documentIds: string[], notKept: string[] = []) => {
    setNotes(notKept.map((file) => ({ file, error: "its original was not kept, so it cannot be re-ingested: upload it again" })));
    if (documentIds.length > 0) void ingestion.watch(documentIds);
  };

  const statusOf = (d: Document) => ingestion.progress.get(d.id)?.status ?? d.status;
  const groups = useMemo(() => {
    const all = docs.data ?? [];
    const of = (v: StatusFilterValue) =>
      all.filter((d) => {
        const s = statusOf(d);
        if (v === "ready") return s === DocumentStatus.READY;
        if (v === "failed") return s === DocumentStatus.FAILED;
        if (v === "working") return !isSettled(s);
        return true;
      });
    return { all: of("all"), working: of("working"), ready: of("ready"), failed: of("failed") };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [docs.data, ingestion.progress]);
  const shown = groups[filter];

  return (
    <section className="screen">
      <Crumbs trail={[{ label: "Knowledge bases", path: "/" }]} />
      <div className="screen-head">
        <h1>{kb.data?.name ?? knowledgeBase}</h1>
        {kb.data && (
          <p className="muted">
            {countOf(kb.data.documentCount, "document")} · {countOf(kb.data.chunkCount, "chunk")} · {countOf(kb.data.tokenCount, "token")} · {kb.data.embeddingModel}
          </p>
        )}
      </div>
      <ErrorNote error={kb.error ?? docs.error ?? ingestion.error ?? error} />
      <UploadZone onFiles={upload} disabled={!kb.data} />
      {uploading.length > 0 && <p className="muted" role="status">Uploading {uploading.join(", ")}…</p>}
      {notes.map((n) => (
        <p key={n.file} className={n.error ? "error" : "muted"} role={n.error ? "alert" : "status"}>
          {n.file}: {n.error ?? "the same content is already in this knowledge base; nothing was queued"}
        </p>
      ))}
      {offers("listSources") && <SourcesPanel knowledgeBase={knowledgeBase} state={sources} documents={docs.data ?? []} canEdit={canEdit} onRemoved={afterSourceChange} />}
      <div className="toolbar">
        {offers("reingestKnowledgeBase") && (
          <button
            type="button"
            disabled={!docs.data?.length}
            onClick={() =>
              act(async () => {
                const res = await quarry.reingestKnowledgeBase({ knowledgeBase });
                reingest(
                  res.documents.map((d) => d.id),
                  res.notKept.map((d) => d.fileName),
                );
              })
            }
          >
            Re-ingest all
          </button>
        )}
        <StatusFilter value={filter} onChange={setFilter} counts={{ all: groups.all.length, working: groups.working.length, ready: groups.ready.length, failed: groups.failed.length }} />
      </div>
      <div className="table-wrap">
        <table className="documents">
          <thead>
            <tr>
              <th>File</th>
              <th>Status</th>
              <th className="num">Size</th>
              <th className="num">Chunks</th>
              <th>Enabled</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <DocumentRow
                key={d.id}
                doc={d}
                href={offers("listDocumentChunks") ? documentPath(knowledgeBase, d.id) : undefined}
                live={ingestion.progress.get(d.id)}
                sourceName={d.metadata.source_id ? sourceNames.get(d.metadata.source_id) : undefined}
                onEnable={(enabled) => act(() => quarry.setDocumentEnabled({ documentId: d.id, enabled }))}
                onReingest={offers("reingestDocument") ? () => act(async () => reingest([(await quarry.reingestDocument({ documentId: d.id })).document!.id])) : undefined}
                onDelete={() => act(() => quarry.deleteDocument({ documentId: d.id }))}
              />
            ))}
          </tbody>
        </table>
        {docs.data && shown.length === 0 && <p className="empty">{filter === "all" ? "No documents yet: drop some files above." : "No documents with this status."}</p>}
      </div>
    </section>
  );
}
