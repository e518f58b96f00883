// What this Quarry reads, as its gateway says (ListReadableFormats, the parser service's one rule):
// the file pickers offer exactly these and the upload hint names them, so a deployment with Tika
// shows Word and images and one without does not. Asked once per page load.
import { useEffect, useState } from "react";
import type { ReadableFormat } from "../../../gen/quarry/common/v1/readable_format_pb.ts";
import { quarry } from "../api/client.ts";

let asked: Promise<ReadableFormat[]> | undefined;

export interface ReadableFormats {
  /** For <input type="file" accept>: every extension and MIME type the rule takes; "" until known. */
  accept: string;
  /** For a person: "PDF document (.pdf), Markdown document (.md, .markdown, .mdx), …". */
  hint: string;
}

export function describeReadable(formats: ReadableFormat[]): ReadableFormats {
  return {
    accept: formats.flatMap((f) => [...f.extensions.map((e) => `.${e}`), f.mimeType]).join(","),
    hint: `${formats.map((f) => `${f.name} (${f.extensions.map((e) => `.${e}`).join(", ")})`).join(", ")}; text files without an extension are read by their content`,
  };
}

export function useReadableFormats(): ReadableFormats | undefined {
  const [formats, setFormats] = useState<ReadableFormats>();
  useEffect(() => {
    let current = true;
    asked ??= quarry.listReadableFormats({}).then((r) => r.formats);
    asked.then(
      (list) => current && setFormats(describeReadable(list)),
      () => {
        asked = undefined; // asked again next time (a key entered since, the gateway back)
      },
    );
    return () => {
      current = false;
    };
  }, []);
  return formats;
}
