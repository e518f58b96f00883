// A real broker restart in the middle of ingestion. The broker is this test's own (same Kafka
// install and settings as deploy/local/engines.sh, its own ports and data folder), because
// restarting the shared one would break every other Kafka suite running beside this one; a TCP
// proxy would not do either, since Kafka hands clients its advertised address and they bypass it.
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { isRetryingFailure } from "../../lib/domain.ts";
import { upload, watchAll } from "../e2e/e2e-helpers.ts";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { SERVICE_NAMES, startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { startPrivateKafka, type PrivateKafka } from "../../lib/testing/private-kafka.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { waitFor } from "./wait-for.ts";

describeWithAllEngines("Quarry distributed: Kafka broker restart", (engines) => {
  let kafka: PrivateKafka;
  let quarry: DistributedQuarry;

  beforeAll(async () => {
    kafka = await startPrivateKafka();
    quarry = await startDistributedQuarry({ ...engines, kafkaBrokers: kafka.brokers });
  });

  afterAll(async () => {
    await quarry?.stop();
    await kafka?.stop();
  });

  it("Kafka restarted mid-ingest: ingestion resumes and every document ends ready or failed", async () => {
    const kb = (await quarry.client.createKnowledgeBase({ name: `dist-kafka-${quarry.runId}` })).knowledgeBase!.id;
    const files: FixtureName[] = ["company.md", "filing.html", "canal-boating.docx", "lighthouses.pdf", "notes-zh.md"];
    const ids = new Map<string, string>();
    for (const file of files) ids.set((await upload(quarry.client, kb, file, await fixtureBytes(file))).document!.id, file);

    const { downMs, upMs } = await kafka.restart();
    console.info(`Kafka stopped in ${downMs} ms and was ready again ${upMs} ms later`);

    // WatchIngestion ends at the first terminal status, and a failure the pipeline is still retrying
    // ("(retrying)") is terminal there; "ends" here means READY, or FAILED for good.
    const settled = (d: { status: DocumentStatus; errorMessage: string }) =>
      d.status === DocumentStatus.READY || (d.status === DocumentStatus.FAILED && !isRetryingFailure(d.errorMessage));
    // Where a document stopped, and what each stage said last, so a failure here can be read.
    const diagnose = async (error: unknown) => {
      const { documents } = await quarry.client.listDocuments({ knowledgeBase: kb });
      const states = documents.map((d) => `${d.fileName} ${DocumentStatus[d.status]} ${d.errorMessage}`).join("; ");
      const logs = SERVICE_NAMES.map((name) => `--- ${name}\n${quarry.logTail(name, 15)}`).join("\n");
      return new Error(`${(error as Error).message}: ${states}\n${logs}`);
    };
    await watchAll(quarry.client, [...ids.keys()], 240_000).catch(async (error) => {
      throw await diagnose(error);
    });
    const ends = await waitFor(
      "every document to end READY or FAILED for good",
      async () => {
        const { documents } = await quarry.client.listDocuments({ knowledgeBase: kb });
        return documents.length === files.length && documents.every(settled) ? documents : undefined;
      },
      60_000,
    ).catch(async (error) => {
      throw await diagnose(error);
    });
    console.info(`after the broker restart: ${ends.map((d) => `${d.fileName} ${DocumentStatus[d.status]} ${d.errorMessage}`).join("; ")}`);
    expect(ends.map((d) => ids.get(d.id)).sort()).toEqual([...files].sort());
    for (const d of ends) if (d.status === DocumentStatus.FAILED) expect(d.errorMessage, `${d.fileName} failed without a reason`).not.toBe("");
  }, 300_000);
});
