// On a document's page: the source it was synced from — its name and kind, the path or URL there
// (a link for a URL), when it was last modified there, and the source's tags as the document
// carries them. Nothing for an uploaded document.
import type { Document } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { useLoad } from "../use-load.ts";
import { formatWhen } from "./schedule.ts";
import { kindLabel } from "./source-kinds.tsx";
import { isUrl, sourceOf } from "./source-mark.tsx";

const SOURCE_KEYS = new Set(["source_id", "source_path", "source_modified"]);

export function DocumentSource({ knowledgeBase, doc }: { knowledgeBase: string; doc: Document }) {
  const from = sourceOf(doc);
  const sources = useLoad(() => (from ? quarry.listSources({ knowledgeBase }).then((r) => r.sources) : Promise.resolve([])), [knowledgeBase, from?.id]);
  if (!from) return null;
  const source = sources.data?.find((s) => s.id === from.id);
  // The source's tags as this document carries them; with the source gone, every metadata key a sync did not set.
  const tags = Object.entries(doc.metadata).filter(([k]) => (source ? k in source.tags : !SOURCE_KEYS.has(k)));
  return (
    <dl className="panel document-source" aria-label="Source">
      <div>
        <dt>Source</dt>
        <dd>{source ? `${source.name} (${kindLabel(source)})` : sources.data ? `${from.id} (removed)` : from.id}</dd>
      </div>
      <div>
        <dt>{isUrl(from.path) ? "URL" : "Path"}</dt>
        <dd>
          {isUrl(from.path) ? (
            <a href={from.path} target="_blank" rel="noreferrer">
              {from.path}
            </a>
          ) : (
            <code>{from.path}</code>
          )}
        </dd>
      </div>
      {from.modified && (
        <div>
          <dt>Modified</dt>
          <dd>{formatWhen(from.modified)}</dd>
        </div>
      )}
      {tags.length > 0 && (
        <div>
          <dt>Tags</dt>
          <dd>
            {tags.map(([k, v]) => (
              <span key={k} className="tag">{`${k}=${v}`}</span>
            ))}
          </dd>
        </div>
      )}
    </dl>
  );
}
