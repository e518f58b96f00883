// `quarry source add|list|sync|remove`: sources that keep a knowledge base in sync with a folder, an
// S3 bucket or a website (docs/SOURCES.md), on the gateway.
import { resolve } from "node:path";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError, type Command, type Option } from "commander";
import { SourceSyncState, type S3Source, type Source, type SourceSync } from "../gen/quarry/common/v1/source_pb.ts";
import { gatewayClient } from "../client/gateway-client.ts";
import { syncWithProgress } from "../client/sync-with-progress.ts";
import { startSyncProgress } from "./sync-progress.ts";

interface AddOptions {
  kb: string;
  folder?: string;
  s3?: string;
  endpoint?: string;
  region?: string;
  pathStyle?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  include?: string[];
  exclude?: string[];
  start?: string[];
  sitemap?: string;
  depth: number;
  maxPages: number;
  rate: number;
  userAgent?: string;
  tag?: Record<string, string>;
  every: number;
  url: string;
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("It must be a whole number of at least 0.");
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("It must be a number above 0.");
  return n;
}

/** "30s", "15m", "6h", "1d" or plain seconds. */
export function parseInterval(value: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`"${value}" is not an interval such as 90, 30s, 15m, 6h or 1d`);
  return Number(match[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
}

function parseTag(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`"${value}" is not KEY=VALUE`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** s3://bucket/prefix → the bucket and the prefix as written (keys are literal: "docs/" and "docs" differ). */
export function parseS3Location(value: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`"${value}" is not s3://bucket or s3://bucket/prefix`);
  return { bucket: match[1]!, prefix: match[2] ?? "" };
}

/** The secret from the flag or, kept out of the process list, from $QUARRY_S3_SECRET_ACCESS_KEY. */
function s3Kind(o: AddOptions) {
  const secretAccessKey = o.secretAccessKey ?? (o.accessKeyId ? (process.env.QUARRY_S3_SECRET_ACCESS_KEY ?? "") : "");
  const { bucket, prefix } = parseS3Location(o.s3!);
  return {
    case: "s3" as const,
    value: {
      bucket,
      prefix,
      endpoint: o.endpoint ?? "",
      region: o.region ?? "",
      pathStyle: Boolean(o.pathStyle),
      include: o.include ?? [],
      exclude: o.exclude ?? [],
      accessKeyId: o.accessKeyId ?? "",
      secretAccessKey,
    },
  };
}

const when = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t).toISOString() : "—");

export function describeSync(sync: SourceSync | undefined): string {
  if (!sync) return "never synced";
  const state = { [SourceSyncState.RUNNING]: "running", [SourceSyncState.DONE]: "done", [SourceSyncState.FAILED]: "failed" }[sync.state as 1 | 2 | 3] ?? "unknown";
  if (sync.state === SourceSyncState.FAILED) return `failed at ${when(sync.finishedAt)}: ${sync.error}`;
  const counts = `added ${sync.added}, changed ${sync.changed}, removed ${sync.removed}, moved ${sync.moved}, unchanged ${sync.unchanged}, failed ${sync.failed}`;
  return `${state} (started ${when(sync.startedAt)}, finished ${when(sync.finishedAt)}): ${counts}`;
}

function describeS3(s3: S3Source): string {
  const globs = `${s3.include.length ? ` include ${s3.include.join(" ")}` : ""}${s3.exclude.length ? ` exclude ${s3.exclude.join(" ")}` : ""}`;
  const credentials = s3.accessKeyId ? `key ${s3.accessKeyId}${s3.secretAccessKeySet ? " (secret stored)" : ""}` : "the gateway's credentials";
  return `s3 s3://${s3.bucket}/${s3.prefix}${s3.endpoint ? ` at ${s3.endpoint}` : ""}${s3.pathStyle ? " path-style" : ""}${globs}, ${credentials}`;
}

function describeSource(s: Source): string {
  const where =
    s.kind.case === "folder"
      ? `folder ${s.kind.value.path}${s.kind.value.include.length ? ` include ${s.kind.value.include.join(" ")}` : ""}${s.kind.value.exclude.length ? ` exclude ${s.kind.value.exclude.join(" ")}` : ""}`
      : s.kind.case === "website"
        ? `website ${[...s.kind.value.startUrls, ...(s.kind.value.sitemapUrl ? [`sitemap ${s.kind.value.sitemapUrl}`] : [])].join(" ")} depth ${s.kind.value.maxDepth}`
        : s.kind.case === "s3"
          ? describeS3(s.kind.value)
          : "unknown kind";
  const tags = Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(" ");
  const schedule = s.intervalSeconds ? `every ${s.intervalSeconds}s, next ${when(s.nextSyncAt)}` : "manual";
  return `${s.name} (${s.id}): ${where}${tags ? `; tags ${tags}` : ""}; ${schedule}\n  last sync: ${describeSync(s.lastSync)}\n${(s.lastSync?.errors ?? []).map((e) => `  ✗ ${e.item}: ${e.reason}\n`).join("")}`;
}

export function registerSourceCommands(program: Command, urlOption: () => Option): void {
  const source = program.command("source").description("sources that keep a knowledge base in sync with a folder, an S3 bucket or a website");
  source
    .command("add")
    .argument("<name>")
    .requiredOption("--kb <name>", "the knowledge base")
    .option("--folder <path>", "a folder source: this folder (local or mounted)")
    .option("--s3 <s3://bucket/prefix>", "an S3 bucket source: the objects under this prefix (any S3-compatible store)")
    .option("--endpoint <url>", "s3: the store's endpoint (default: AWS S3 of the region)")
    .option("--region <name>", "s3: the region (default us-east-1)")
    .option("--path-style", "s3: the bucket in the path (http://host/bucket/key), as most S3-compatible stores expect")
    .option("--access-key-id <id>", "s3: the access key id; its secret from --secret-access-key or $QUARRY_S3_SECRET_ACCESS_KEY (neither: the gateway's own credentials)")
    .option("--secret-access-key <secret>", "s3: the secret, stored and never shown again")
    .option("--include <globs...>", "folder, s3: only paths (keys after the prefix) matching these globs")
    .option("--exclude <globs...>", "folder, s3: leave out paths matching these globs")
    .option("--start <urls...>", "a website source: start at these URLs")
    .option("--sitemap <url>", "a website source: start at the pages this sitemap lists")
    .option("--depth <n>", "website: links followed from a start page", wholeNumber, 2)
    .option("--max-pages <n>", "website: most pages a sync reads (0: 1,000)", wholeNumber, 0)
    .option("--rate <n>", "website: requests per second at most", positive, 2)
    .option("--user-agent <name>", "website: the user agent sent and obeyed in robots.txt (default QuarryBot)")
    .option("--tag <key=value>", "metadata every document of the source carries (repeatable)", parseTag)
    .option("--every <interval>", "sync on this interval (90, 30s, 15m, 6h, 1d); default: manual only", parseInterval, 0)
    .addOption(urlOption())
    .action(async (name: string, o: AddOptions) => {
      if ([o.folder, o.s3, o.start || o.sitemap].filter(Boolean).length !== 1) throw new InvalidArgumentError("name one of --folder, --s3, or --start/--sitemap for a website");
      const kind = o.folder
        ? { case: "folder" as const, value: { path: resolve(o.folder), include: o.include ?? [], exclude: o.exclude ?? [] } }
        : o.s3
          ? s3Kind(o)
          : {
            case: "website" as const,
            value: { startUrls: o.start ?? [], sitemapUrl: o.sitemap ?? "", maxDepth: o.depth, maxPages: o.maxPages, requestsPerSecond: o.rate, userAgent: o.userAgent ?? "" },
          };
      const res = await gatewayClient(o.url).addSource({ knowledgeBase: o.kb, source: { name, kind, tags: o.tag ?? {}, intervalSeconds: o.every } });
      process.stdout.write(`added ${describeSource(res.source!)}`);
    });
  source
    .command("list")
    .requiredOption("--kb <name>", "the knowledge base")
    .addOption(urlOption())
    .action(async (o: { kb: string; url: string }) => {
      const { sources } = await gatewayClient(o.url).listSources({ knowledgeBase: o.kb });
      if (sources.length === 0) process.stdout.write(`the knowledge base ${o.kb} has no sources; \`quarry source add NAME --kb ${o.kb} --folder PATH\` adds one\n`);
      for (const s of sources) process.stdout.write(describeSource(s));
    });
  source
    .command("sync")
    .argument("<source>", "the source's name or id")
    .requiredOption("--kb <name>", "the knowledge base")
    .addOption(urlOption())
    .action(async (name: string, o: { kb: string; url: string }) => {
      const progress = startSyncProgress(process.stdout, name);
      const res = await syncWithProgress(gatewayClient(o.url), o.kb, name, (sync) => progress.update(sync)).finally(() => progress.stop());
      process.stdout.write(describeSource(res.source!));
      if (res.source!.lastSync?.state === SourceSyncState.FAILED) process.exitCode = 1;
    });
  source
    .command("remove")
    .argument("<source>", "the source's name or id")
    .requiredOption("--kb <name>", "the knowledge base")
    .option("--delete-documents", "also delete the documents the source made")
    .addOption(urlOption())
    .action(async (name: string, o: { kb: string; deleteDocuments?: boolean; url: string }) => {
      await gatewayClient(o.url).removeSource({ knowledgeBase: o.kb, source: name, deleteDocuments: Boolean(o.deleteDocuments) });
      process.stdout.write(`removed ${name}${o.deleteDocuments ? " and its documents" : " (its documents stay)"}\n`);
    });
}
