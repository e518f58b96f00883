// How Quarry authenticates to a secured Kafka: SASL (PLAIN or SCRAM) and TLS, from
// KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD, KAFKA_SSL and KAFKA_SSL_CA_FILE.
// Unset: plaintext, as the local engines run.
import type { KafkaConfig, SASLOptions } from "kafkajs";
import { ConfigError, optional, type Env } from "../config.ts";
import { caFile, credentialPair } from "../engine-tls.ts";

export type KafkaSecurity = Pick<KafkaConfig, "ssl" | "sasl">;

const MECHANISMS = ["plain", "scram-sha-256", "scram-sha-512"] as const;

export function kafkaSecurity(env: Env): KafkaSecurity {
  const ca = caFile(env, "KAFKA_SSL_CA_FILE");
  const sslFlag = optional(env, "KAFKA_SSL");
  if (sslFlag && !["true", "1", "false", "0"].includes(sslFlag)) throw new ConfigError(`KAFKA_SSL must be true or false, not "${sslFlag}"`);
  const ssl = sslFlag === "true" || sslFlag === "1" || ca !== undefined;
  const mechanism = optional(env, "KAFKA_SASL_MECHANISM")?.toLowerCase();
  const pair = credentialPair(env, "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD");
  let sasl: SASLOptions | undefined;
  if (mechanism) {
    if (!(MECHANISMS as readonly string[]).includes(mechanism)) throw new ConfigError(`KAFKA_SASL_MECHANISM must be one of ${MECHANISMS.join(", ")}, not "${mechanism}"`);
    if (!pair) throw new ConfigError(`KAFKA_SASL_MECHANISM is ${mechanism}: set KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD too`);
    sasl = { mechanism: mechanism as (typeof MECHANISMS)[number], ...pair } as SASLOptions;
  } else if (pair) {
    throw new ConfigError("KAFKA_SASL_USERNAME is set but KAFKA_SASL_MECHANISM is not (plain, scram-sha-256 or scram-sha-512)");
  }
  return {
    ...(ssl ? { ssl: ca ? { ca: [ca] } : true } : {}),
    ...(sasl ? { sasl } : {}),
  };
}
