// Sends each file whole with UploadDocument. Connect-Web cannot stream a request body (browsers'
// fetch has no streaming uploads over HTTP/1.1), so UploadDocumentStream stays the CLI's way for
// files beyond the gateway's upload limit; the gateway's limit message is shown for those.
import type { Document } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";

export type UploadOutcome = { file: string; document?: Document; unchanged?: boolean; error?: string };

export async function uploadFile(knowledgeBase: string, file: File): Promise<UploadOutcome> {
  try {
    const content = new Uint8Array(await file.arrayBuffer());
    const res = await quarry.uploadDocument({ header: { knowledgeBase, fileName: file.name, mimeType: file.type }, content });
    return { file: file.name, document: res.document, unchanged: res.unchanged };
  } catch (e) {
    return { file: file.name, error: describeError(e) };
  }
}
