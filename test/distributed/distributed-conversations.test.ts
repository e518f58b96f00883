// Conversations and assistants on distributed Quarry: six service processes on OpenSearch, Kafka
// and Tika, the assistants, conversations and turns in the index's OpenSearch catalog, the chat
// model the OpenAI-compatible stub. The scenario is the embedded one (test/support/conversation-scenario.ts).
import { afterAll, beforeAll } from "vitest";
import { conversationScenario, conversationStubEnv, startConversationStub } from "../support/conversation-scenario.ts";
import { startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import type { OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { describeWithAllEngines } from "./engines-all.ts";

describeWithAllEngines("conversations and assistants on distributed Quarry", (engines) => {
  let quarry: DistributedQuarry;
  let stub: OpenAiStub;
  beforeAll(async () => {
    stub = await startConversationStub();
    quarry = await startDistributedQuarry({ ...engines, serviceEnv: { answer: conversationStubEnv(stub) } });
  }, 240_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  conversationScenario(() => ({ client: quarry.client, stub }));
});
