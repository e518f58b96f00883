// Decides whether a suite that needs something from outside the repository runs: a real engine
// (OpenSearch, Kafka, Tika, Elasticsearch, S3) or the shared material beside the clone (shared-material.ts).
// When it is required (QUARRY_REQUIRE_ENGINES=1 / QUARRY_REQUIRE_SHARED=1, both set by .ci/run) and
// missing, the run fails; otherwise (a laptop without Java, a fresh clone) the suite is skipped and
// says so in one loud line, never silently.
import { describe, it } from "vitest";

export type EngineVariable = "OPENSEARCH_URL" | "KAFKA_BROKERS" | "TIKA_URL" | "ELASTICSEARCH_URL" | "S3_ENDPOINT";

/** Something a suite needs; absent when `value` is undefined. */
export interface Requirement {
  value: string | undefined;
  /** The variable that makes its absence a failure. */
  requiredBy: "QUARRY_REQUIRE_ENGINES" | "QUARRY_REQUIRE_SHARED" | "QUARRY_REQUIRE_LOCAL_LLM" | "QUARRY_CLUSTER_FAULTS";
  /** What is missing, e.g. "TIKA_URL is not set". */
  missing: string;
  /** How to get it. */
  hint: string;
}

/** The requirement's value; when absent, throws if it is required, else prints the skip line for `what`. */
export function checkRequirement(requirement: Requirement, what: string): string | undefined {
  if (requirement.value) return requirement.value;
  if (process.env[requirement.requiredBy] === "1") {
    throw new Error(`${requirement.missing} but ${requirement.requiredBy}=1: ${requirement.hint}`);
  }
  console.warn(`\n*** SKIPPED: ${requirement.missing}, so ${what} did not run. ${requirement.hint}. ***\n`);
  return undefined;
}

/** describe() that runs only when the requirement is met (or fails when it is required and missing). */
export function describeWith(requirement: Requirement, name: string, body: (value: string) => void): void {
  const value = checkRequirement(requirement, `"${name}"`);
  if (value) describe(name, () => body(value));
  else {
    describe.skip(`${name} (skipped: ${requirement.missing})`, () => {
      // Never run: it makes the run's closing "N skipped" count this suite instead of saying 0.
      it(`needs what is missing: ${requirement.missing}`, () => {});
    });
  }
}

function engine(variable: EngineVariable): Requirement {
  return {
    value: process.env[variable]?.trim() || undefined,
    requiredBy: "QUARRY_REQUIRE_ENGINES",
    missing: `${variable} is not set`,
    hint: variable === "S3_ENDPOINT" ? "Start SeaweedFS with deploy/local/engines.sh up seaweedfs" : "Start the engines with deploy/local/engines.sh up",
  };
}

export function engineAddress(variable: EngineVariable): string | undefined {
  return checkRequirement(engine(variable), "the suites that need it");
}

/** describe() that runs only when the engine is there (or fails when it is required and missing). */
export function describeWithEngine(variable: EngineVariable, name: string, body: (address: string) => void): void {
  describeWith(engine(variable), name, body);
}
