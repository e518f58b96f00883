// Downloads a knowledge base's archive (docs/PORTABILITY.md): the server streams it, the pieces
// become one Blob, and a temporary link saves it under the base's name. "with assistants" adds the
// assistants that mount the base and their corrections.
import { useState } from "react";
import { quarry } from "../api/client.ts";
import { useAction } from "../use-action.ts";
import { ErrorNote } from "../components/error-note.tsx";

export function ExportButton({ name }: { name: string }) {
  const action = useAction();
  const [withAssistants, setWithAssistants] = useState(false);
  const download = () =>
    action.run(async () => {
      const pieces: Uint8Array<ArrayBuffer>[] = [];
      for await (const piece of quarry.exportKnowledgeBase({ knowledgeBase: name, withAssistants })) pieces.push(new Uint8Array(piece.data));
      const url = URL.createObjectURL(new Blob(pieces, { type: "application/gzip" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = `${name}.quarry.gz`;
      link.click();
      URL.revokeObjectURL(url);
    });
  return (
    <>
      <button type="button" onClick={download} disabled={action.busy} title="Download the base as an archive another Quarry can import">
        {action.busy ? "Exporting…" : "Export"}
      </button>
      <label className="check" title="Also export the assistants that mount this base, with their corrections">
        <input type="checkbox" checked={withAssistants} onChange={(e) => setWithAssistants(e.target.checked)} />
        with assistants
      </label>
      <ErrorNote error={action.error} />
    </>
  );
}
