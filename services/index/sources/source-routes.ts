// The index's source RPCs: protobuf ↔ the source store. The index keeps sources and their cursors
// as given; the gateway decides what a sync does (gateway/sources/).
import { fromJson, toJson, type JsonObject as ProtoJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { SourceSchema, type Source } from "../../../gen/quarry/common/v1/source_pb.ts";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { JsonObject } from "../../../lib/domain.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { SourceStore, StoredSource } from "./source-store.ts";

type SourceMethods = Pick<
  ServiceImpl<typeof IndexService>,
  "saveSource" | "getSource" | "listSources" | "deleteSource" | "listSourceItems" | "saveSourceItem" | "deleteSourceItem"
>;

const toProto = (stored: StoredSource): Source => fromJson(SourceSchema, stored.body as ProtoJson, { ignoreUnknownFields: true });

export function sourceHandlers(sources: SourceStore, catalog: Pick<Catalog, "getKnowledgeBase">): SourceMethods {
  return {
    async saveSource(request) {
      const source = request.source;
      if (!source?.id || !source.name.trim()) throw new InvalidInputError("a source needs an id and a name");
      const kb = await catalog.getKnowledgeBase(source.knowledgeBaseId, { counts: false });
      const body = toJson(SourceSchema, { ...source, knowledgeBaseId: kb.id }) as JsonObject;
      return { source: toProto(await sources.save({ id: source.id, knowledgeBaseId: kb.id, name: source.name.trim(), body })) };
    },
    async getSource(request) {
      return { source: toProto(await sources.get(request.sourceId)) };
    },
    async listSources(request) {
      return { sources: (await sources.list(request.knowledgeBaseId || undefined)).map(toProto) };
    },
    async deleteSource(request) {
      await sources.delete(request.sourceId);
      return {};
    },
    async listSourceItems(request) {
      return { items: await sources.items(request.sourceId) };
    },
    async saveSourceItem(request) {
      if (!request.item?.itemId) throw new InvalidInputError("a source item needs its item id");
      await sources.saveItem(request.sourceId, request.item);
      return {};
    },
    async deleteSourceItem(request) {
      await sources.deleteItem(request.sourceId, request.itemId);
      return {};
    },
  };
}
