// GetSystemStatus and RedriveDeadLetters: what the System page and `quarry status` show. Health is
// asked of each service; slow requests come from this process's RecentActivity, and so do the stage
// counts in embedded mode; in distributed mode the stage counts are the sum of every stage
// process's activity reports on the bus (lib/pipeline/stage-activity-reports.ts). Backlog and dead
// letters are read from the bus, which every gateway has.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DeadLetterSchema,
  GetSystemStatusResponseSchema,
  type DeadLetter,
  type GetSystemStatusResponse,
} from "../../gen/quarry/gateway/v1/system_status_pb.ts";
import type { EventBus } from "../../lib/bus/event-bus.ts";
import { ACTIVITY_WINDOW_MS, type RecentActivity } from "../../lib/metrics/recent-activity.ts";
import { deadLettersWaiting, pipelineBacklog, PIPELINE_CONSUMERS } from "../../lib/pipeline/stage-backlog.ts";
import { clusterStageActivity, type ClusterActivity } from "../../lib/pipeline/stage-activity-reports.ts";
import type { DeadLetterEntry, DeadLetters } from "./dead-letters.ts";
import type { HealthProbe } from "./health-client.ts";

export interface SystemStatusDeps {
  mode: "embedded" | "distributed";
  bus: EventBus;
  health: HealthProbe;
  /** This process's last hour; absent where nothing records it. */
  activity?: RecentActivity;
  deadLetters: DeadLetters;
  /** QUARRY_TRACE_VIEWER_URL. */
  traceViewerUrl: string;
}

export async function systemStatus(deps: SystemStatusDeps): Promise<GetSystemStatusResponse> {
  const notes: string[] = [];
  const distributed = deps.mode === "distributed";
  const [services, backlog, waiting, deadLetters, cluster] = await Promise.all([
    deps.health(),
    pipelineBacklog(deps.bus).catch((error: unknown) => (notes.push(`backlog: ${message(error)}`), [])),
    deadLettersWaiting(deps.bus).catch((error: unknown) => (notes.push(`dead letters waiting: ${message(error)}`), new Map<string, number>())),
    deps.deadLetters.list().catch((error: unknown) => (notes.push(`dead letters: ${message(error)}`), [])),
    distributed
      ? clusterStageActivity(deps.bus).catch((error: unknown): ClusterActivity | undefined => void notes.push(`stage counts: ${message(error)}`))
      : undefined,
  ]);
  const activity = cluster?.stages ?? new Map((deps.activity?.stages() ?? []).map((s) => [s.stage, s]));
  const counted = distributed ? cluster !== undefined : deps.activity !== undefined;
  return create(GetSystemStatusResponseSchema, {
    mode: deps.mode,
    reportingProcesses: cluster?.processes ?? [],
    services: [{ name: "gateway", address: "this process", serving: true, error: "" }, ...services],
    stages: PIPELINE_CONSUMERS.map(({ stage, topic }) => {
      const seen = activity.get(stage);
      return {
        stage,
        topic,
        counted,
        handled: BigInt(seen?.handled ?? 0),
        failed: BigInt(seen?.failed ?? 0),
        retrying: BigInt(seen?.retrying ?? 0),
        rejected: BigInt(seen?.rejected ?? 0),
        deadLettered: BigInt(seen?.deadLettered ?? 0),
        failures: [...(seen?.failures ?? [])].sort((a, b) => b[1] - a[1]).map(([reason, count]) => ({ reason, count: BigInt(count) })),
        inFlight: BigInt(seen?.inFlight ?? 0),
        pending: BigInt(backlog.filter((row) => row.group === stage).reduce((sum, row) => sum + row.pending, 0)),
        deadLettersWaiting: BigInt(waiting.get(stage) ?? 0),
      };
    }),
    slowestRequests: (deps.activity?.slowestRequests() ?? []).map((r) => ({
      method: r.method,
      durationMs: r.seconds * 1000,
      code: r.code,
      traceId: r.traceId,
      at: timestampFromDate(r.at),
    })),
    deadLetters: deadLetters.map(deadLetterToProto),
    windowSeconds: ACTIVITY_WINDOW_MS / 1000,
    traceViewerUrl: deps.traceViewerUrl,
    notes,
  });
}

export function deadLetterToProto(entry: DeadLetterEntry): DeadLetter {
  return create(DeadLetterSchema, {
    id: entry.id,
    stage: entry.stage,
    topic: entry.topic,
    documentId: entry.documentId,
    knowledgeBaseId: entry.knowledgeBaseId,
    fileName: entry.fileName,
    reason: entry.reason,
    rejected: entry.rejected,
    redrives: entry.redrives,
    deadAt: timestampFromDate(entry.deadAt),
  });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
