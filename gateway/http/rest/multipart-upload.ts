// A multipart/form-data upload (`curl -F file=@handbook.pdf`), read with the platform's own form
// parser (undici's Request.formData, built into Node) behind a byte limit, so an oversized body is
// refused as it arrives instead of after it was buffered.
import { Readable } from "node:stream";
import { InvalidInputError, TooLargeError } from "../../../lib/errors.ts";
import type { NodeRequest } from "../http-route.ts";

export interface Upload {
  fileName: string;
  mimeType: string;
  metadata: Record<string, string>;
  content: Uint8Array;
}

/** Room for the form's boundaries and small fields around the file. */
const FORM_OVERHEAD = 64 * 1024;

export async function readUpload(req: NodeRequest, maxUploadBytes: number): Promise<Upload> {
  const type = String(req.headers["content-type"] ?? "");
  if (!/^multipart\/form-data/i.test(type)) {
    throw new InvalidInputError(`send the file as multipart/form-data (curl -F file=@path), not ${type || "a body without a Content-Type"}`);
  }
  const limit = maxUploadBytes + FORM_OVERHEAD;
  if (Number(req.headers["content-length"] ?? 0) > limit) throw tooLarge(maxUploadBytes);
  let size = 0;
  const limited = (Readable.toWeb(req as Readable) as unknown as ReadableStream<Uint8Array>).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > limit) controller.error(tooLarge(maxUploadBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
  let form: FormData;
  try {
    form = await new Request("http://upload/", { method: "POST", headers: { "content-type": type }, body: limited as ReadableStream, duplex: "half" } as RequestInit).formData();
  } catch (error) {
    if (error instanceof TooLargeError) throw error;
    if ((error as Error).cause instanceof TooLargeError) throw (error as Error).cause;
    throw new InvalidInputError(`the multipart body could not be read: ${(error as Error).message}`);
  }
  const file = form.get("file");
  if (!(file instanceof Blob)) throw new InvalidInputError('the form needs a "file" field holding the file (curl -F file=@path)');
  const fileName = String(form.get("file_name") ?? (file as File).name ?? "");
  let metadata: Record<string, string> = {};
  const given = form.get("metadata");
  if (typeof given === "string" && given.trim()) {
    try {
      metadata = JSON.parse(given) as Record<string, string>;
    } catch {
      throw new InvalidInputError('the "metadata" field must be a JSON object of strings, e.g. {"team":"ops"}');
    }
    if (typeof metadata !== "object" || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== "string")) {
      throw new InvalidInputError('the "metadata" field must be a JSON object of strings, e.g. {"team":"ops"}');
    }
  }
  return { fileName, mimeType: String(form.get("mime_type") ?? (file.type || "")), metadata, content: new Uint8Array(await file.arrayBuffer()) };
}

const tooLarge = (max: number) => new TooLargeError(`the upload is larger than ${max} bytes (QUARRY_MAX_UPLOAD_BYTES)`);
