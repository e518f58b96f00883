// A Kafka broker of the test's (or the soak bench's) own, from the install deploy/local/engines.sh fetched, so a test can
// restart a real broker (stop the JVM, start it again on the same data folder) without pulling
// the shared broker out from under every other Kafka suite running on the machine. The settings
// mirror start_kafka in engines.sh, on free ports and a temporary folder.
import { spawn, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { freePort } from "./free-port.ts";

export interface PrivateKafka {
  brokers: string;
  /** Stops the broker (SIGTERM, a clean shutdown) and starts it again on the same data. */
  restart(): Promise<{ downMs: number; upMs: number }>;
  stop(): Promise<void>;
}

function kafkaHome(): string {
  const pom = readFileSync(resolve(import.meta.dirname, "../../deploy/local/pom.xml"), "utf8");
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1];
  const home = join(process.env.QUARRY_ENGINES_DIR ?? join(homedir(), ".cache/quarry/engines"), `kafka-${version}`);
  if (!version || !existsSync(join(home, "libs"))) throw new Error(`no Kafka install at ${home}: run deploy/local/engines.sh fetch kafka`);
  return home;
}

/**
 * A Kafka cluster id: 16 random bytes in URL-safe base64. One in 64 begins with "-", which
 * kafka-storage reads as an option and refuses ("argument --cluster-id/-t: expected one argument");
 * Kafka's own Uuid.randomUuid draws again then, and so does this.
 */
export function kafkaClusterId(draw: () => Buffer = () => randomBytes(16)): string {
  for (;;) {
    const id = draw().toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const home = kafkaHome();
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin/java") : "java";
  const dir = await mkdtemp(join(tmpdir(), "quarry-kafka-"));
  const [port, controllerPort] = [await freePort(), await freePort()];
  const brokers = `127.0.0.1:${port}`;
  const properties = join(dir, "server.properties");
  writeFileSync(
    properties,
    [
      "process.roles=broker,controller",
      "node.id=1",
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      "controller.listener.names=CONTROLLER",
      "inter.broker.listener.name=PLAINTEXT",
      "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
      `log.dirs=${join(dir, "data")}`,
      "num.partitions=1",
      "offsets.topic.replication.factor=1",
      "transaction.state.log.replication.factor=1",
      "transaction.state.log.min.isr=1",
      "share.coordinator.state.topic.replication.factor=1",
      "share.coordinator.state.topic.min.isr=1",
      "group.initial.rebalance.delay.ms=0",
      "auto.create.topics.enable=false",
      "message.max.bytes=16777216",
      "replica.fetch.max.bytes=16777216",
    ].join("\n"),
  );
  const log4j = join(dir, "log4j2.properties");
  writeFileSync(log4j, "status = warn\nappender.console.type = Console\nappender.console.name = STDOUT\nappender.console.layout.type = PatternLayout\nappender.console.layout.pattern = [%d] %p %m (%c)%n\nrootLogger.level = warn\nrootLogger.appenderRef.stdout.ref = STDOUT\n");
  const classpath = `${home}/libs/*`;
  const clusterId = kafkaClusterId();
  execFileSync(java, ["-Xmx256m", "-cp", classpath, `-Dlog4j2.configurationFile=${log4j}`, "kafka.tools.StorageTool", "format", "-t", clusterId, "-c", properties], {
    stdio: "ignore",
    timeout: 60_000,
  });

  let child: ChildProcess | undefined;
  const logFile = createWriteStream(join(dir, "kafka.out"), { flags: "a" });
  const launch = async () => {
    child = spawn(java, ["-Xms256m", "-Xmx384m", "-XX:+UseG1GC", "-Djava.awt.headless=true", `-Dlog4j2.configurationFile=${log4j}`, "-cp", classpath, "kafka.Kafka", properties], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.pipe(logFile, { end: false });
    child.stderr!.pipe(logFile, { end: false });
    await waitReady(brokers, 90_000);
  };
  const halt = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((done) => {
      const killer = setTimeout(() => c.kill("SIGKILL"), 30_000);
      c.once("exit", () => {
        clearTimeout(killer);
        done();
      });
      c.kill("SIGTERM");
    });
  };

  await launch();
  return {
    brokers,
    async restart() {
      const t0 = Date.now();
      await halt();
      const downMs = Date.now() - t0;
      await launch();
      return { downMs, upMs: Date.now() - t0 - downMs };
    },
    async stop() {
      await halt();
      logFile.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Ready means a metadata round trip succeeds, as engines.sh checks with TopicCommand --list. */
async function waitReady(brokers: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const admin = new Kafka({ brokers: [brokers], clientId: "quarry-private-kafka", logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    try {
      await admin.connect();
      await admin.listTopics();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`private Kafka at ${brokers} not ready: ${(error as Error).message}`);
    } finally {
      await admin.disconnect().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
