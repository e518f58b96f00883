// The distributed suites need all three engines at once; nesting describeWithEngine keeps its
// rules (fail when required and missing, skip loudly otherwise) for each of them.
import { describeWithEngine } from "../support/engines.ts";

export interface EngineAddresses {
  opensearchUrl: string;
  kafkaBrokers: string;
  tikaUrl: string;
}

export function describeWithAllEngines(name: string, body: (engines: EngineAddresses) => void): void {
  describeWithEngine("OPENSEARCH_URL", name, (opensearchUrl) =>
    describeWithEngine("KAFKA_BROKERS", "on Kafka", (kafkaBrokers) =>
      describeWithEngine("TIKA_URL", "with Tika", (tikaUrl) => body({ opensearchUrl, kafkaBrokers, tikaUrl })),
    ),
  );
}
