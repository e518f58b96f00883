// The index's assistant RPCs: protobuf ↔ AssistantRegistry (assistant-proto.ts maps).
import type { ServiceImpl } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { assistantSettingsFromProto, assistantToProto } from "./assistant-proto.ts";
import type { AssistantRegistry } from "./assistant-registry.ts";

type AssistantMethods = Pick<ServiceImpl<typeof IndexService>, "createAssistant" | "getAssistant" | "listAssistants" | "updateAssistant" | "deleteAssistant">;

export function assistantHandlers(assistants: AssistantRegistry): AssistantMethods {
  return {
    async createAssistant(request) {
      if (!request.assistant) throw new InvalidInputError("send the assistant to create");
      return { assistant: assistantToProto(await assistants.create(assistantSettingsFromProto(request.assistant))) };
    },
    async getAssistant(request) {
      return { assistant: assistantToProto(await assistants.get(request.assistant)) };
    },
    async listAssistants() {
      return { assistants: (await assistants.list()).map(assistantToProto) };
    },
    async updateAssistant(request) {
      if (!request.update) throw new InvalidInputError("send the assistant's new configuration");
      return { assistant: assistantToProto(await assistants.update(request.assistant, assistantSettingsFromProto(request.update))) };
    },
    async deleteAssistant(request) {
      await assistants.delete(request.assistant);
      return {};
    },
  };
}
