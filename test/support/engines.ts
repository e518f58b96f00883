// Decides whether a suite that needs a real engine (OpenSearch, Kafka, Tika) runs. With
// QUARRY_REQUIRE_ENGINES=1 (set by .ci/run) a missing engine address fails the run; without it (a
// laptop without Java) the suite is skipped and says so loudly, never silently.
import { describe } from "vitest";

export type EngineVariable = "OPENSEARCH_URL" | "KAFKA_BROKERS" | "TIKA_URL" | "ELASTICSEARCH_URL";

export function engineAddress(variable: EngineVariable): string | undefined {
  const value = process.env[variable]?.trim();
  if (value) return value;
  if (process.env.QUARRY_REQUIRE_ENGINES === "1") {
    throw new Error(`${variable} is not set but QUARRY_REQUIRE_ENGINES=1: start the engines with deploy/local/engines.sh up`);
  }
  console.warn(`\n*** SKIPPED: ${variable} is not set, so the suites that need it did not run. Start the engines with deploy/local/engines.sh up. ***\n`);
  return undefined;
}

/** describe() that runs only when the engine is there (or fails when it is required and missing). */
export function describeWithEngine(variable: EngineVariable, name: string, body: (address: string) => void): void {
  const address = engineAddress(variable);
  if (address) describe(name, () => body(address));
  else describe.skip(`${name} (skipped: ${variable} not set)`, () => {});
}
