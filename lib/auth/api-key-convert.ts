// ApiKey between the protobuf message and the domain record, for the index's and the gateway's routes.
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ApiKeyRole as RoleProto, ApiKeySchema, type ApiKey as ApiKeyProto } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { InvalidInputError } from "../errors.ts";
import type { ApiKeyRecord, ApiKeyRole } from "./api-key.ts";

const ROLES: [ApiKeyRole, RoleProto][] = [
  ["reader", RoleProto.READER],
  ["editor", RoleProto.EDITOR],
  ["admin", RoleProto.ADMIN],
];

export function roleToProto(role: ApiKeyRole): RoleProto {
  return ROLES.find(([r]) => r === role)![1];
}

export function roleFromProto(role: RoleProto): ApiKeyRole {
  const found = ROLES.find(([, p]) => p === role);
  if (!found) throw new InvalidInputError("an API key needs a role: reader, editor or admin");
  return found[0];
}

/** "reader", "editor" or "admin" as a person types it (the CLI). */
export function roleFromName(name: string): RoleProto {
  const found = ROLES.find(([r]) => r === name.trim().toLowerCase());
  if (!found) throw new InvalidInputError(`--role must be reader, editor or admin, not "${name}"`);
  return found[1];
}

export function roleName(role: RoleProto): string {
  return ROLES.find(([, p]) => p === role)?.[0] ?? "unknown";
}

export function apiKeyToProto(key: ApiKeyRecord): ApiKeyProto {
  return create(ApiKeySchema, {
    id: key.id,
    name: key.name,
    role: roleToProto(key.role),
    knowledgeBaseIds: [...key.knowledgeBaseIds],
    createdAt: timestampFromDate(key.createdAt),
  });
}

export function apiKeyFromProto(key: ApiKeyProto): ApiKeyRecord {
  return {
    id: key.id,
    name: key.name,
    role: roleFromProto(key.role),
    knowledgeBaseIds: [...key.knowledgeBaseIds],
    createdAt: key.createdAt ? timestampDate(key.createdAt) : new Date(0),
  };
}
