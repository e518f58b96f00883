import type { ConnectRouter } from "@connectrpc/connect";
import { ParserService } from "../../gen/quarry/parser/v1/parser_pb.ts";
import { parsedToProto } from "../../lib/proto-convert.ts";
import type { DocumentParser } from "./document-parser.ts";

export function parserRoutes(parser: DocumentParser) {
  return (router: ConnectRouter) =>
    router.service(ParserService, {
      async parse(request) {
        const parsed = await parser.parse({ bytes: request.content, fileName: request.fileName, declaredMimeType: request.mimeType });
        return { document: parsedToProto(parsed) };
      },
    });
}
