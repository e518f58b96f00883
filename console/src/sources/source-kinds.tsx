// The kinds of source the console can add and show, in one place: each names its settings as form
// fields, builds the proto's settings from them, and says where a source of its kind reads from.
// A new kind is one more entry here, once the generated Source has its case.
import { create } from "@bufbuild/protobuf";
import type { ReactNode } from "react";
import { FolderSourceSchema, S3SourceSchema, WebsiteSourceSchema, type Source } from "../../../gen/quarry/common/v1/source_pb.ts";

export type KindCase = NonNullable<Source["kind"]["case"]>;
type KindValue<C extends KindCase> = Extract<Source["kind"], { case: C }>["value"];

/** A setting's input; `list`: one value per line; `number`: a number (empty: the server's default); `secret`: hidden as typed. */
export interface SettingField {
  key: string;
  label: string;
  type?: "text" | "list" | "number" | "secret";
  placeholder?: string;
  initial?: string;
  hint?: string;
}

export interface SourceKind<C extends KindCase = KindCase> {
  case: C;
  label: string;
  fields: SettingField[];
  /** The proto's settings from the form's values (the server checks them and says what is wrong). */
  build(values: Record<string, string>): KindValue<C>;
  /** Where a source of this kind reads from, as the sources table shows it. */
  where(settings: KindValue<C>): ReactNode;
}

const lines = (value: string | undefined) => (value ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
const number = (value: string | undefined) => (value?.trim() ? Number(value) : 0);

const folder: SourceKind<"folder"> = {
  case: "folder",
  label: "Folder",
  fields: [
    { key: "path", label: "Folder path (absolute, on the Quarry server)", placeholder: "/srv/handbook" },
    { key: "include", label: "Include (globs, one per line; empty: every file)", type: "list", placeholder: "**/*.md" },
    { key: "exclude", label: "Exclude (globs, one per line)", type: "list", placeholder: "**/*.log" },
  ],
  build: (v) => create(FolderSourceSchema, { path: v.path?.trim() ?? "", include: lines(v.include), exclude: lines(v.exclude) }),
  where: (s) => (
    <>
      <code>{s.path}</code>
      {s.include.length > 0 && <div className="muted small">include {s.include.join(", ")}</div>}
      {s.exclude.length > 0 && <div className="muted small">exclude {s.exclude.join(", ")}</div>}
    </>
  ),
};

const website: SourceKind<"website"> = {
  case: "website",
  label: "Website",
  fields: [
    { key: "startUrls", label: "Start URLs (one per line)", type: "list", placeholder: "https://docs.example.com/" },
    { key: "sitemapUrl", label: "Sitemap URL (the pages it lists are crawled too)", placeholder: "https://docs.example.com/sitemap.xml" },
    { key: "maxDepth", label: "Link depth (0: the start pages only)", type: "number", initial: "2" },
    { key: "maxPages", label: "Most pages per sync (empty: 1,000)", type: "number" },
    { key: "requestsPerSecond", label: "Requests per second (empty: 2)", type: "number" },
    { key: "userAgent", label: "User agent (empty: QuarryBot)", placeholder: "QuarryBot" },
  ],
  build: (v) =>
    create(WebsiteSourceSchema, {
      startUrls: lines(v.startUrls),
      sitemapUrl: v.sitemapUrl?.trim() ?? "",
      maxDepth: number(v.maxDepth),
      maxPages: number(v.maxPages),
      requestsPerSecond: number(v.requestsPerSecond),
      userAgent: v.userAgent?.trim() ?? "",
    }),
  where: (s) => (
    <>
      {s.startUrls.map((url) => (
        <div key={url}>
          <a href={url} target="_blank" rel="noreferrer">
            {url}
          </a>
        </div>
      ))}
      {s.sitemapUrl && (
        <div>
          sitemap{" "}
          <a href={s.sitemapUrl} target="_blank" rel="noreferrer">
            {s.sitemapUrl}
          </a>
        </div>
      )}
      <div className="muted small">
        depth {s.maxDepth}
        {s.maxPages > 0 && ` · at most ${s.maxPages} pages`}
      </div>
    </>
  ),
};

const s3: SourceKind<"s3"> = {
  case: "s3",
  label: "S3 bucket",
  fields: [
    { key: "bucket", label: "Bucket", placeholder: "handbook" },
    { key: "prefix", label: "Prefix (empty: the whole bucket)", placeholder: "policies/" },
    { key: "endpoint", label: "Endpoint (empty: AWS S3)", placeholder: "http://127.0.0.1:8333" },
    { key: "region", label: "Region (empty: us-east-1)", placeholder: "eu-central-1" },
    { key: "accessKeyId", label: "Access key id (empty: the server's own credentials)" },
    // Write-only on the server: it is stored and never shown again.
    { key: "secretAccessKey", label: "Secret access key (stored, never shown again)", type: "secret" },
    { key: "include", label: "Include (globs over the key after the prefix, one per line)", type: "list", placeholder: "**/*.pdf" },
    { key: "exclude", label: "Exclude (globs, one per line)", type: "list" },
  ],
  build: (v) =>
    create(S3SourceSchema, {
      bucket: v.bucket?.trim() ?? "",
      prefix: v.prefix?.trim() ?? "",
      endpoint: v.endpoint?.trim() ?? "",
      region: v.region?.trim() ?? "",
      // Any endpoint but AWS's own expects the bucket in the path.
      pathStyle: Boolean(v.endpoint?.trim()),
      accessKeyId: v.accessKeyId?.trim() ?? "",
      secretAccessKey: v.secretAccessKey ?? "",
      include: lines(v.include),
      exclude: lines(v.exclude),
    }),
  where: (s) => (
    <>
      <code>
        s3://{s.bucket}/{s.prefix}
      </code>
      {s.endpoint && <div className="muted small">at {s.endpoint}</div>}
      <div className="muted small">{s.accessKeyId ? `key ${s.accessKeyId}${s.secretAccessKeySet ? " (secret stored)" : ""}` : "the server's credentials"}</div>
      {s.include.length > 0 && <div className="muted small">include {s.include.join(", ")}</div>}
      {s.exclude.length > 0 && <div className="muted small">exclude {s.exclude.join(", ")}</div>}
    </>
  ),
};

export const SOURCE_KINDS: SourceKind[] = [folder, website, s3] as SourceKind[];

export function kindOf(source: Pick<Source, "kind">): SourceKind | undefined {
  return SOURCE_KINDS.find((k) => k.case === source.kind.case);
}

/** The source's kind as a word ("folder"), or "unknown" for one this console does not know. */
export function kindLabel(source: Pick<Source, "kind">): string {
  return kindOf(source)?.label.toLowerCase() ?? "unknown";
}

export function whereOf(source: Pick<Source, "kind">): ReactNode {
  const kind = kindOf(source);
  return kind && source.kind.value ? kind.where(source.kind.value as never) : <span className="muted">a kind this console does not know</span>;
}

/** The Source's kind oneof from a kind and its form values. */
export function kindFrom(kind: SourceKind, values: Record<string, string>): Source["kind"] {
  return { case: kind.case, value: kind.build(values) } as Source["kind"];
}
