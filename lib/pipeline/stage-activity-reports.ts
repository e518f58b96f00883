// Each stage's last hour across every process that runs it. In distributed mode the stages run in
// their own processes, any number of replicas each, and the gateway's status view has none of their
// counts in memory; so every stage process publishes its RecentActivity to a short-lived bus topic
// every few seconds, keyed by the process, and the status view sums the newest report of each
// process that is still reporting. A process that stopped drops out once its report is stale, as
// its counts would from a Prometheus query over live targets.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { hostname } from "node:os";
import { StageActivityReportSchema, type StageActivityReport } from "../../gen/quarry/events/v1/events_pb.ts";
import type { EventBus } from "../bus/event-bus.ts";
import type { Logger } from "../logger.ts";
import type { FailureClass } from "../metrics/metrics.ts";
import type { RecentActivity, StageActivity } from "../metrics/recent-activity.ts";

export const STAGE_ACTIVITY_TOPIC = "status.stage-activity";
/** How often a stage process reports: the System page refreshes every 5 s. */
export const REPORT_EVERY_MS = 5_000;
/** A report older than this is a process that stopped (three missed reports). */
const STALE_AFTER_MS = 3 * REPORT_EVERY_MS;
/** Reports read per status call: enough for every live process to have its newest among them. */
const REPORTS_READ = 500;

export interface Reporting {
  stop(): Promise<void>;
}

/** Publishes this process's stages every REPORT_EVERY_MS until stopped; a failed publish is logged and the next one tries again. */
export async function reportStageActivity(bus: EventBus, activity: RecentActivity, service: string, logger: Logger, everyMs = REPORT_EVERY_MS): Promise<Reporting> {
  // Not fatal: the stage works without its report, and a publish may create the topic later.
  await bus.ensureTopics([STAGE_ACTIVITY_TOPIC]).catch((err: unknown) => logger.warn({ err }, `could not create ${STAGE_ACTIVITY_TOPIC}; the status view may miss this process's counts`));
  const process_ = `${service}@${hostname()}:${process.pid}`;
  let last: Promise<void> = Promise.resolve();
  const publish = () => {
    const report = create(StageActivityReportSchema, { process: process_, at: timestampFromDate(new Date()), stages: activity.stages().map(countsToProto) });
    last = bus
      .publish(STAGE_ACTIVITY_TOPIC, [{ key: process_, value: toBinary(StageActivityReportSchema, report) }])
      .catch((err: unknown) => logger.warn({ err }, "could not publish this process's stage activity; the status view misses it until the next report"));
  };
  publish();
  const timer = setInterval(publish, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await last;
    },
  };
}

export interface ClusterActivity {
  stages: Map<string, StageActivity>;
  /** The processes whose reports were counted. */
  processes: string[];
}

/** Every live process's newest report, summed by stage. */
export async function clusterStageActivity(bus: EventBus, now = Date.now()): Promise<ClusterActivity> {
  const newest = new Map<string, StageActivityReport>();
  for (const message of await bus.peek(STAGE_ACTIVITY_TOPIC, REPORTS_READ)) {
    let report: StageActivityReport;
    try {
      report = fromBinary(StageActivityReportSchema, message.value);
    } catch {
      continue; // Not a report of ours: nothing to count.
    }
    if (!report.at || timestampDate(report.at).getTime() < now - STALE_AFTER_MS) continue;
    const seen = newest.get(report.process);
    if (!seen || timestampDate(seen.at!).getTime() < timestampDate(report.at).getTime()) newest.set(report.process, report);
  }
  const stages = new Map<string, StageActivity>();
  for (const report of newest.values()) {
    for (const counts of report.stages) {
      const total = stages.get(counts.stage) ?? { stage: counts.stage, handled: 0, failed: 0, retrying: 0, rejected: 0, deadLettered: 0, inFlight: 0, failures: new Map<FailureClass, number>() };
      total.handled += Number(counts.handled);
      total.failed += Number(counts.failed);
      total.retrying += Number(counts.retrying);
      total.rejected += Number(counts.rejected);
      total.deadLettered += Number(counts.deadLettered);
      total.inFlight += Number(counts.inFlight);
      for (const [reason, n] of Object.entries(counts.failures)) total.failures.set(reason as FailureClass, (total.failures.get(reason as FailureClass) ?? 0) + Number(n));
      stages.set(counts.stage, total);
    }
  }
  return { stages, processes: [...newest.keys()].sort() };
}

function countsToProto(s: StageActivity) {
  return {
    stage: s.stage,
    handled: BigInt(s.handled),
    failed: BigInt(s.failed),
    retrying: BigInt(s.retrying),
    rejected: BigInt(s.rejected),
    deadLettered: BigInt(s.deadLettered),
    inFlight: BigInt(s.inFlight),
    failures: Object.fromEntries([...s.failures].map(([reason, n]) => [reason, BigInt(n)])),
  };
}
