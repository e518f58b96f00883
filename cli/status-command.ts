// `quarry status`: what the console's System page shows, in a terminal (an admin key): services,
// stages, the slowest requests and the dead letters, as compact tables; --json for scripts.
// `quarry status redrive --all | ID...` sends dead letters back to their stage.
import { toJsonString } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Command, Option } from "commander";
import { GetSystemStatusResponseSchema, type DeadLetter, type GetSystemStatusResponse } from "../gen/quarry/gateway/v1/system_status_pb.ts";
import { gatewayClient } from "../client/gateway-client.ts";

export function registerStatusCommand(program: Command, urlOption: () => Option): void {
  const status = program
    .command("status")
    .description("each service's health, each stage's last hour and backlog, the slowest requests and the dead letters (admin)")
    .option("--json", "the whole status as JSON (the GetSystemStatus response)")
    .addOption(urlOption())
    .action(async (o: { json?: boolean; url: string }) => {
      const res = await gatewayClient(o.url).getSystemStatus({});
      process.stdout.write(o.json ? `${toJsonString(GetSystemStatusResponseSchema, res, { prettySpaces: 2 })}\n` : formatStatus(res));
    });
  status
    .command("redrive")
    .description("send dead letters back to their stage: the ids `quarry status` lists, or --all")
    .argument("[ids...]", "dead letter ids (stage:position)")
    .option("--all", "every dead letter `quarry status` lists")
    .action(async (ids: string[], o: { all?: boolean }) => {
      // --url is the parent's option: commander parses it wherever it stands on the line.
      const { url } = status.opts<{ url: string }>();
      const { redriven } = await gatewayClient(url).redriveDeadLetters({ ids, all: Boolean(o.all) });
      for (const letter of redriven) process.stdout.write(`re-driven ${letter.id}\t${letter.documentId}\t${letter.fileName || "-"}\tback to ${letter.topic}\n`);
      if (redriven.length === 0) process.stdout.write("no dead letters to re-drive\n");
    });
}

/** The status as a person reads it: one table per section, columns aligned. */
export function formatStatus(s: GetSystemStatusResponse): string {
  const minutes = Math.round(s.windowSeconds / 60);
  const sections = [
    `Quarry (${s.mode})`,
    table(["SERVICE", "HEALTH", "ADDRESS", "ERROR"], s.services.map((x) => [x.name, x.serving ? "serving" : "DOWN", x.address, x.error])),
    table(
      ["STAGE", `HANDLED/${minutes}m`, "FAILED", "RETRYING", "REJECTED", "DEAD", "IN FLIGHT", "BACKLOG", "DLQ WAITING", "FAILURES BY REASON"],
      s.stages.map((x) => [
        x.stage,
        ...(x.counted ? [x.handled, x.failed, x.retrying, x.rejected, x.deadLettered, x.inFlight].map(String) : ["-", "-", "-", "-", "-", "-"]),
        String(x.pending),
        String(x.deadLettersWaiting),
        x.failures.map((f) => `${f.reason} ${f.count}`).join(", "),
      ]),
    ),
    s.slowestRequests.length === 0
      ? `No requests in the last ${minutes} minutes.`
      : table(["SLOWEST REQUESTS", "MS", "CODE", "TRACE"], s.slowestRequests.slice(0, 10).map((r) => [r.method, r.durationMs.toFixed(0), r.code, traceLink(s, r.traceId)])),
    s.deadLetters.length === 0
      ? "No dead letters."
      : table(["DEAD LETTER", "STAGE", "DOCUMENT", "FILE", "DIED", "REASON"], s.deadLetters.map((d) => [d.id, d.stage, d.documentId, d.fileName || "-", died(d), reasonOf(d)])),
    ...(s.reportingProcesses.length > 0 ? [`Stage counts summed over ${s.reportingProcesses.length} stage processes: ${s.reportingProcesses.join(", ")}`] : []),
    ...(s.stages.some((x) => !x.counted) ? ["Stage counts could not be read (see the notes); each service's /metrics still has them."] : []),
    ...s.notes.map((note) => `Note: ${note}`),
  ];
  return `${sections.join("\n\n")}\n`;
}

function traceLink(s: GetSystemStatusResponse, traceId: string): string {
  if (!traceId) return "-";
  return s.traceViewerUrl ? s.traceViewerUrl.replaceAll("{trace_id}", traceId) : traceId;
}

function died(d: DeadLetter): string {
  return d.deadAt ? timestampDate(d.deadAt).toISOString().replace(/\.\d+Z$/, "Z") : "";
}

function reasonOf(d: DeadLetter): string {
  const notes = [d.rejected ? "rejected" : "", d.redrives > 0 ? `${d.redrives} re-drives` : ""].filter(Boolean);
  return notes.length ? `${d.reason} (${notes.join(", ")})` : d.reason;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  // The last column is left unpadded: a long reason wraps instead of widening every line.
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
