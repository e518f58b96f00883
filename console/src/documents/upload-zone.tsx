// Drop files here or pick them: many at once.
import { useRef, useState } from "react";
import { useReadableFormats } from "./readable-formats.ts";

export function UploadZone({ onFiles, disabled }: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const readable = useReadableFormats();
  return (
    <div
      className={`dropzone${over ? " over" : ""}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        if (!disabled) onFiles([...e.dataTransfer.files]);
      }}
    >
      <p>Drop files here to upload them</p>
      <p className="muted small" data-testid="readable-formats">
        {readable ? `Quarry reads: ${readable.hint}` : "Asking which formats this Quarry reads…"}
      </p>
      <button type="button" disabled={disabled} onClick={() => input.current?.click()}>
        Choose files
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        accept={readable?.accept || undefined}
        aria-label="Files to upload"
        onChange={(e) => {
          onFiles([...(e.target.files ?? [])]);
          e.target.value = "";
        }}
      />
    </div>
  );
}
