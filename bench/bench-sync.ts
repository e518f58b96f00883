// bench sync: what a source sync costs, per kind, side by side in one run. For each kind (a folder;
// a website served by a local node:http server through a sitemap; an S3 prefix on the store at
// S3_ENDPOINT when it is set) and N items: the first sync (SyncSource until every document is
// ready), a re-sync with nothing changed and its ratio to the first, and a sync after changing 10
// items (its time, and the embedder's calls and texts, counted at the OpenAI-compatible stub the
// Quarry embeds through, so the model's speed is out of the figures). Quarry runs embedded as a
// `quarry serve` child process.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SourceSchema } from "../gen/quarry/common/v1/source_pb.ts";
import { S3Bucket } from "../lib/s3/s3-bucket.ts";
import { startOpenAiStub, type OpenAiStub } from "../lib/testing/openai-stub.ts";
import { describeMachine, machineLine, type MachineInfo } from "./machine.ts";
import { ratio } from "./percentiles.ts";
import { startEmbeddedServe } from "./quarry-process.ts";

export interface SyncBenchOptions {
  files: number;
  progress?(line: string): void;
}

export interface SyncKindResult {
  kind: "folder" | "website" | "s3";
  items: number;
  firstSeconds: number;
  unchangedSeconds: number;
  /** unchanged re-sync ÷ first sync. */
  unchangedRatio: number;
  unchangedSubmitted: number;
  changedSeconds: number;
  changedEmbedderCalls: number;
  changedTextsEmbedded: number;
  /** Items the changed sync submitted (10 when only those 10 are). */
  changedSubmitted: number;
}

export interface SyncBenchReport {
  bench: "sync";
  backend: "embedded";
  machine: MachineInfo;
  files: number;
  kinds: SyncKindResult[];
  /** Why a kind did not run (S3 without S3_ENDPOINT). */
  skipped: string[];
}

const CHANGED = 10;
const FINAL = new Set([DocumentStatus.READY, DocumentStatus.FAILED]);
const text = (i: number, marker: string) => `Item ${i} of the sync bench records ${marker}${i} and nothing else of note.\n`;

/** One kind's place: made with N items, changed in 10, and the source that reads it. */
interface Place {
  kind: SyncKindResult["kind"];
  source: MessageInitShape<typeof SourceSchema>["kind"];
  change(indexes: number[]): Promise<void>;
  close(): Promise<void>;
}

async function folderPlace(files: number): Promise<Place> {
  const root = await mkdtemp(join(tmpdir(), "quarry-bench-sync-"));
  const path = (i: number) => join(root, `f${String(i).padStart(5, "0")}.txt`);
  for (let i = 0; i < files; i++) await writeFile(path(i), text(i, "ORIGINAL"));
  return {
    kind: "folder",
    source: { case: "folder", value: { path: root, include: [], exclude: [] } },
    change: async (indexes) => {
      for (const i of indexes) await writeFile(path(i), text(i, "EDITED"));
    },
    close: () => rm(root, { recursive: true, force: true }),
  };
}

async function websitePlace(files: number): Promise<Place> {
  const pages = Array.from({ length: files }, (_, i) => text(i, "ORIGINAL"));
  const server = createServer((req, res) => {
    const path = new URL(req.url!, "http://x").pathname;
    const page = /^\/p(\d+)\.txt$/.exec(path);
    if (path === "/sitemap.xml") {
      const origin = `http://${req.headers.host}`;
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(`<?xml version="1.0"?><urlset>${pages.map((_, i) => `<url><loc>${origin}/p${i}.txt</loc></url>`).join("")}</urlset>`);
    } else if (page && pages[Number(page[1])] !== undefined) res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(pages[Number(page[1])]);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    kind: "website",
    source: { case: "website", value: { startUrls: [], sitemapUrl: `${origin}/sitemap.xml`, maxDepth: 0, maxPages: files, requestsPerSecond: 10_000, userAgent: "" } },
    change: async (indexes) => {
      for (const i of indexes) pages[i] = text(i, "EDITED");
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function s3Place(files: number, endpoint: string): Promise<Place> {
  const bucketName = process.env.S3_BUCKET ?? "quarry";
  const accessKeyId = process.env.S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = process.env.S3_SECRET_ACCESS_KEY ?? "";
  const bucket = new S3Bucket({ bucket: bucketName, endpoint, region: "us-east-1", credentials: accessKeyId ? { accessKeyId, secretAccessKey } : undefined, forcePathStyle: true });
  const prefix = `bench-sync-${Date.now().toString(36)}${randomBytes(3).toString("hex")}/`;
  const key = (i: number) => `${prefix}f${String(i).padStart(5, "0")}.txt`;
  for (let i = 0; i < files; i++) await bucket.put(key(i), Buffer.from(text(i, "ORIGINAL")));
  return {
    kind: "s3",
    source: { case: "s3", value: { endpoint, region: "", bucket: bucketName, prefix, pathStyle: true, include: [], exclude: [], accessKeyId, secretAccessKey } },
    change: async (indexes) => {
      for (const i of indexes) await bucket.put(key(i), Buffer.from(text(i, "EDITED")));
    },
    close: async () => {
      const keys: string[] = [];
      for await (const object of bucket.list(prefix)) keys.push(object.key);
      for (let at = 0; at < keys.length; at += 1000) await bucket.deleteMany(keys.slice(at, at + 1000), `clean up ${prefix}`);
    },
  };
}

/** Waits until no document of the base is still ingesting (WatchIngestion, at most 1,000 ids a stream). */
async function settle(client: QuarryClient, kb: string): Promise<void> {
  const documents = (await client.listDocuments({ knowledgeBase: kb })).documents;
  const inFlight = documents.filter((d) => !FINAL.has(d.status)).map((d) => d.id);
  for (let at = 0; at < inFlight.length; at += 1000) {
    for await (const _ of client.watchIngestion({ documentIds: inFlight.slice(at, at + 1000) })) void _;
  }
}

function embeddingRequests(stub: OpenAiStub, from: number) {
  const requests = stub.requests.slice(from).filter((r) => r.path === "/v1/embeddings");
  const texts = requests.reduce((n, r) => n + (Array.isArray(r.body.input) ? r.body.input.length : 1), 0);
  return { calls: requests.length, texts };
}

async function measure(client: QuarryClient, stub: OpenAiStub, place: Place, files: number): Promise<SyncKindResult> {
  const kb = `bench-sync-${place.kind}-${randomBytes(3).toString("hex")}`;
  await client.createKnowledgeBase({ name: kb });
  await client.addSource({ knowledgeBase: kb, source: { name: place.kind, kind: place.source } });
  const timedSync = async () => {
    const from = stub.requests.length;
    const started = performance.now();
    const sync = (await client.syncSource({ knowledgeBase: kb, source: place.kind })).source!.lastSync!;
    if (sync.failed > 0 || sync.error) throw new Error(`the ${place.kind} sync failed: ${sync.error || sync.errors.map((e) => `${e.item}: ${e.reason}`).join("; ")}`);
    await settle(client, kb);
    return { sync, seconds: (performance.now() - started) / 1000, ...embeddingRequests(stub, from) };
  };
  const first = await timedSync();
  if (first.sync.added !== files) throw new Error(`the first ${place.kind} sync added ${first.sync.added} of ${files}`);
  const unchanged = await timedSync();
  await place.change(Array.from({ length: CHANGED }, (_, n) => Math.floor((n * files) / CHANGED)));
  const changed = await timedSync();
  await client.deleteKnowledgeBase({ knowledgeBase: kb });
  return {
    kind: place.kind,
    items: files,
    firstSeconds: first.seconds,
    unchangedSeconds: unchanged.seconds,
    unchangedRatio: ratio(unchanged.seconds, first.seconds),
    unchangedSubmitted: unchanged.sync.submitted,
    changedSeconds: changed.seconds,
    changedEmbedderCalls: changed.calls,
    changedTextsEmbedded: changed.texts,
    changedSubmitted: changed.sync.submitted,
  };
}

export async function runSyncBench(options: SyncBenchOptions): Promise<SyncBenchReport> {
  const progress = options.progress ?? (() => {});
  const stub = await startOpenAiStub({ embeddingDimension: 64 });
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-sync-data-"));
  const quarry = await startEmbeddedServe(dataDir, undefined, {
    QUARRY_EMBEDDING_PROVIDER: "openai",
    QUARRY_EMBEDDING_BASE_URL: stub.url,
    QUARRY_EMBEDDING_MODEL: "stub-embedding",
    QUARRY_EMBEDDING_DIMENSION: "64",
  });
  const client = gatewayClient(quarry.url);
  const kinds: SyncKindResult[] = [];
  const skipped: string[] = [];
  const s3Endpoint = process.env.S3_ENDPOINT?.trim();
  if (!s3Endpoint) skipped.push("s3: S3_ENDPOINT is not set (eval \"$(deploy/local/engines.sh env)\")");
  const makers: (() => Promise<Place>)[] = [() => folderPlace(options.files), () => websitePlace(options.files), ...(s3Endpoint ? [() => s3Place(options.files, s3Endpoint)] : [])];
  try {
    for (const make of makers) {
      const place = await make();
      try {
        progress(`sync bench: ${place.kind}, ${options.files} items`);
        kinds.push(await measure(client, stub, place, options.files));
      } finally {
        await place.close();
      }
    }
  } finally {
    quarry.child.kill("SIGTERM");
    await quarry.exited;
    await stub.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { bench: "sync", backend: "embedded", machine: describeMachine(), files: options.files, kinds, skipped };
}

export function formatSyncReport(report: SyncBenchReport): string {
  const rows = report.kinds.map(
    (k) =>
      `| ${k.kind} | ${k.items} | ${k.firstSeconds.toFixed(2)} | ${k.unchangedSeconds.toFixed(2)} (${k.unchangedSubmitted} submitted) | ${k.unchangedRatio} | ${k.changedSeconds.toFixed(2)} | ${k.changedSubmitted} | ${k.changedEmbedderCalls} calls, ${k.changedTextsEmbedded} texts |`,
  );
  return [
    `sync bench: ${report.files} items per kind, the embedder a stub (its speed is out of the figures); ${machineLine(report.machine)}`,
    "",
    "| kind | items | first sync, s | unchanged re-sync, s | re-sync ÷ first | after changing 10, s | submitted | embedder |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    ...report.skipped.map((s) => `\nnot run: ${s}`),
  ].join("\n");
}
