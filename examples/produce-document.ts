// Puts a document on Quarry's documents.submitted topic from outside Quarry, as any Kafka producer
// may: a protobuf quarry.events.v1.DocumentSubmitted keyed by the document id (or by the file name
// when the producer leaves the id to Quarry).
//
//   KAFKA_BROKERS=127.0.0.1:9092 npx tsx examples/produce-document.ts <knowledge-base-id> <file>
//
// Files above the inline limit go by reference: pass --by-reference to send a file:// URI instead
// of the bytes (the parser must be able to read that path).
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { Kafka, logLevel } from "kafkajs";
import { DocumentSubmittedSchema } from "../gen/quarry/events/v1/events_pb.ts";

const [knowledgeBaseId, file, flag] = process.argv.slice(2);
if (!knowledgeBaseId || !file) {
  console.error("usage: produce-document.ts <knowledge-base-id> <file> [--by-reference]");
  process.exit(2);
}
const brokers = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
const fileName = basename(file);
const event = create(DocumentSubmittedSchema, {
  knowledgeBaseId,
  fileName,
  // document_id and version are optional: Quarry derives the id from the knowledge base and file
  // name, and takes the message timestamp as the version.
  content:
    flag === "--by-reference"
      ? { case: "contentUri", value: pathToFileURL(resolve(file)).href }
      : { case: "inlineContent", value: await readFile(file) },
});
const producer = new Kafka({ clientId: "quarry-example-producer", brokers, logLevel: logLevel.WARN }).producer();
await producer.connect();
await producer.send({ topic: "documents.submitted", messages: [{ key: `${knowledgeBaseId}/${fileName}`, value: Buffer.from(toBinary(DocumentSubmittedSchema, event)) }] });
await producer.disconnect();
console.log(`submitted ${fileName} to ${knowledgeBaseId}; its progress is on WatchIngestion (knowledge_base = ${knowledgeBaseId})`);
