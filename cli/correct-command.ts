// `quarry correct TURN_ID "corrected answer" [--question "…"] [--wait]`, `quarry correct list
// --assistant A`, `quarry correct delete ID`: managed corrections (docs/ANSWERS.md).
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Command, Option } from "commander";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { Correction } from "../gen/quarry/gateway/v1/corrections_pb.ts";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";

const state = (c: Correction) => (c.document ? DocumentStatus[c.document.status].toLowerCase() : "unknown");

function describe(c: Correction): string {
  const at = c.createdAt ? timestampDate(c.createdAt).toISOString() : "";
  const lines = [
    `${c.id}\t${state(c)}\tturn ${c.turnId}\t${at}${c.author ? `\tby ${c.author}` : ""}`,
    ...c.question.split("\n").map((q) => `  Q: ${q}`),
    `  A: ${c.correctedAnswer.replace(/\s*\n\s*/g, " ")}`,
  ];
  return `${lines.join("\n")}\n`;
}

/** Follows the correction's document until the pipeline has it READY (or it failed). */
async function waitReady(client: QuarryClient, documentId: string): Promise<{ status: DocumentStatus; error: string }> {
  let last = { status: DocumentStatus.PENDING, error: "" };
  for await (const update of client.watchIngestion({ documentIds: [documentId] })) {
    last = { status: update.status, error: update.error };
    if (update.status === DocumentStatus.READY || (update.status === DocumentStatus.FAILED && !update.error.endsWith("(retrying)"))) break;
  }
  return last;
}

export function registerCorrectCommand(program: Command, urlOption: () => Option): void {
  const correct = program
    .command("correct")
    .description("correct a turn's answer: published to its assistant's corrections base, answered from first when a question matches")
    .argument("<turn-id>", "the turn to correct (tn_…, as `quarry chat` prints it)")
    .argument("<answer>", "what the assistant should have answered")
    .option("--question <text...>", "the question wording(s) to match; default: the turn's question as it was searched")
    .option("--wait", "wait until the correction is ingested and in use")
    .addOption(urlOption())
    .action(async (turnId: string, answer: string, o: { question?: string[]; wait?: boolean; url: string }) => {
      const client = gatewayClient(o.url);
      const { correction } = await client.correctAnswer({ turnId, correctedAnswer: answer, question: (o.question ?? []).join("\n") });
      const c = correction!;
      process.stdout.write(`published correction ${c.id} to knowledge base ${c.knowledgeBaseId} (assistant ${c.assistantId})\n${describe(c)}`);
      if (!o.wait) {
        process.stdout.write("ingesting; `quarry correct list --assistant ID` shows when it is ready\n");
        return;
      }
      const done = await waitReady(client, c.id);
      if (done.status !== DocumentStatus.READY) throw new Error(`the correction ${c.id} failed to ingest: ${done.error}`);
      process.stdout.write(`ready: questions that match it are answered from it first\n`);
    });

  // --url belongs to `correct` and is read from it by the subcommands (commander gives an option
  // both define to the parent).
  const url = () => (correct.opts() as { url: string }).url;
  correct
    .command("list")
    .description("an assistant's corrections, newest first")
    .requiredOption("--assistant <assistant>", "id or name")
    .action(async (o: { assistant: string }) => {
      const { corrections } = await gatewayClient(url()).listCorrections({ assistant: o.assistant });
      if (corrections.length === 0) process.stdout.write(`no corrections for ${o.assistant}; \`quarry correct TURN_ID "answer"\` makes one\n`);
      for (const c of corrections) process.stdout.write(describe(c));
    });

  correct
    .command("delete")
    .description("delete a correction (its document); answers no longer use it")
    .argument("<id>", "the correction's id, as `quarry correct list` shows it")
    .action(async (id: string) => {
      await gatewayClient(url()).deleteCorrection({ correctionId: id });
      process.stdout.write(`deleted correction ${id}\n`);
    });
}
