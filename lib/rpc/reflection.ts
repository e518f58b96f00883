// gRPC server reflection (grpc.reflection.v1), so grpcurl and `buf curl` can call Quarry without
// the .proto files. Written here because no maintained package implements it for connect-es v2;
// it is a small lookup over the descriptors protoc-gen-es already embeds in gen/.
import { create, toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createRegistry } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  ServerReflectionResponseSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.ts";

export function reflectionRoutes(files: DescFile[], serviceNames: string[]) {
  const allFiles = files.flatMap((f) => withDependencies(f));
  const byName = new Map(allFiles.map((f) => [f.name + ".proto", f]));
  const registry = createRegistry(...allFiles);

  const fileWithDependencies = (file: DescFile): Uint8Array[] =>
    withDependencies(file).map((f) => toBinary(FileDescriptorProtoSchema, f.proto));

  const answer = (request: ServerReflectionRequest): ServerReflectionResponse => {
    const base = { validHost: request.host, originalRequest: request };
    const notFound = (what: string) =>
      create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: { case: "errorResponse", value: { errorCode: 5, errorMessage: `${what} not found` } },
      });
    const files = (file: DescFile | undefined, what: string) =>
      file
        ? create(ServerReflectionResponseSchema, {
            ...base,
            messageResponse: { case: "fileDescriptorResponse", value: { fileDescriptorProto: fileWithDependencies(file) } },
          })
        : notFound(what);
    const ask = request.messageRequest;
    switch (ask.case) {
      case "listServices":
        return create(ServerReflectionResponseSchema, {
          ...base,
          messageResponse: { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } },
        });
      case "fileByFilename":
        return files(byName.get(ask.value), `file ${ask.value}`);
      case "fileContainingSymbol": {
        const symbol = ask.value.replace(/^\./, "");
        const direct = registry.get(symbol);
        // A method name (pkg.Service.Method) resolves to its service's file.
        const owner = direct ?? registry.get(symbol.slice(0, symbol.lastIndexOf(".")));
        return files(owner?.file, `symbol ${symbol}`);
      }
      case "allExtensionNumbersOfType":
        return create(ServerReflectionResponseSchema, {
          ...base,
          messageResponse: { case: "allExtensionNumbersResponse", value: { baseTypeName: ask.value, extensionNumber: [] } },
        });
      default:
        return notFound("extension");
    }
  };

  return (router: ConnectRouter) =>
    router.service(ServerReflection, {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) yield answer(request);
      },
    });
}

function withDependencies(file: DescFile, seen = new Set<string>()): DescFile[] {
  if (seen.has(file.name)) return [];
  seen.add(file.name);
  return [file, ...file.dependencies.flatMap((d) => withDependencies(d, seen))];
}

