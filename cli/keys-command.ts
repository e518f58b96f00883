// `quarry keys create|list|revoke`: API keys on the gateway (an admin key, or none on a Quarry
// that has no key yet).
import type { Command, Option } from "commander";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ApiKey } from "../gen/quarry/common/v1/api_key_pb.ts";
import { roleFromName, roleName } from "../lib/auth/api-key-convert.ts";
import { gatewayClient } from "../client/gateway-client.ts";

const describeKey = (k: ApiKey) =>
  `${k.id}\t${k.name}\t${roleName(k.role)}\t${k.knowledgeBaseIds.length ? k.knowledgeBaseIds.join(",") : "all knowledge bases"}\t${k.createdAt ? timestampDate(k.createdAt).toISOString() : ""}`;

export function registerKeysCommand(program: Command, urlOption: () => Option): void {
  const keys = program.command("keys").description("API keys: who may call this Quarry, with which role, on which knowledge bases");
  keys
    .command("create")
    .description("create a key; its secret is printed once")
    .requiredOption("--name <name>", "a name to recognise the key by")
    .requiredOption("--role <role>", "admin, editor or reader")
    .option("--kb <names...>", "limit the key to these knowledge bases (not for admin keys)")
    .addOption(urlOption())
    .action(async (o: { name: string; role: string; kb?: string[]; url: string }) => {
      const res = await gatewayClient(o.url).createApiKey({ name: o.name, role: roleFromName(o.role), knowledgeBases: o.kb ?? [] });
      process.stdout.write(`created ${describeKey(res.apiKey!)}\n${res.secret}\n`);
      process.stderr.write("Store the key now: Quarry keeps only its hash and cannot show it again.\n");
    });
  keys
    .command("list")
    .addOption(urlOption())
    .action(async (o: { url: string }) => {
      for (const k of (await gatewayClient(o.url).listApiKeys({})).apiKeys) process.stdout.write(`${describeKey(k)}\n`);
    });
  keys
    .command("revoke")
    .argument("<key>", "the key's id or name")
    .addOption(urlOption())
    .action(async (key: string, o: { url: string }) => {
      await gatewayClient(o.url).revokeApiKey({ apiKey: key });
      process.stdout.write(`revoked ${key}\n`);
    });
}
