import type { ConnectRouter } from "@connectrpc/connect";
import { ParserService } from "../../gen/quarry/parser/v1/parser_pb.ts";
import { parsedToProto } from "../../lib/proto-convert.ts";
import type { RoutingParser } from "./routing-parser.ts";

export function parserRoutes(parser: Pick<RoutingParser, "parse" | "check" | "readableFormats">) {
  return (router: ConnectRouter) =>
    router.service(ParserService, {
      async parse(request) {
        const parsed = await parser.parse({ bytes: request.content, fileName: request.fileName, declaredMimeType: request.mimeType });
        return { document: parsedToProto(parsed) };
      },
      listReadableFormats() {
        return { formats: parser.readableFormats().map(({ name, mimeType, extensions }) => ({ name, mimeType, extensions })) };
      },
      checkReadable(request) {
        const size = Math.max(Number(request.size), request.head.length);
        return { formatName: parser.check({ bytes: request.head, fileName: request.fileName, declaredMimeType: request.mimeType }, size).name };
      },
    });
}
