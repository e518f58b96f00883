import type { Env } from "../../lib/config.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { parserConfig } from "./config.ts";
import { IsolatedParser } from "./isolated-parser.ts";
import { RoutingParser } from "./routing-parser.ts";
import { TikaClient } from "./tika-client.ts";
import { TikaParser } from "./tika-parser.ts";
import { build } from "./server.ts";
import { startParserWorker } from "./worker.ts";
import { knowledgeBaseLookup } from "../../lib/rpc/knowledge-base-lookup.ts";
import { StagePayloads, stageInlineMaxBytes } from "../../lib/pipeline/stage-payloads.ts";

/** `peers` reaches the index service, which says whether a submission's knowledge base exists. */
export function assembleParser(env: Env, peers: Peers, shared: SharedDeps): AssembledService {
  const config = parserConfig(env);
  const logger = shared.logger.child({ service: "parser" });
  const tika = config.tikaUrl ? new TikaParser(new TikaClient({ baseUrl: config.tikaUrl, timeoutMs: config.tikaTimeoutMs })) : undefined;
  // Untrusted bytes are parsed off the main thread (see isolated-parser.ts); Tika is its own process already.
  const builtin = new IsolatedParser({ limits: config.limits, threads: config.threads, logger });
  const parser = new RoutingParser({ builtin, tika, limits: config.limits });
  return {
    name: "parser",
    server: build({ parser, logger, metrics: shared.metrics }),
    startWorkers: async () => [
      await startParserWorker({
        bus: shared.bus,
        parser,
        knowledgeBase: knowledgeBaseLookup(() => peers.transport("index")),
        logger,
        redrive: shared.redrive,
        metrics: shared.metrics,
        fileRefRoots: config.fileRefRoots,
        blobs: shared.blobs,
        payloads: new StagePayloads(shared.blobs, stageInlineMaxBytes(env)),
      }),
    ],
    close: () => builtin.close(),
  };
}
