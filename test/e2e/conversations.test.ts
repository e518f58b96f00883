// Conversations and assistants on the embedded Quarry (SQLite catalog), over real HTTP, with the
// OpenAI-compatible stub as the chat model: see test/support/conversation-scenario.ts.
import { afterAll, beforeAll, describe } from "vitest";
import { conversationScenario, conversationStubEnv, startConversationStub } from "../support/conversation-scenario.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import type { OpenAiStub } from "../support/openai-stub.ts";

describe("conversations and assistants on embedded Quarry", () => {
  let quarry: EmbeddedQuarryFixture;
  let stub: OpenAiStub;
  beforeAll(async () => {
    stub = await startConversationStub();
    quarry = await startEmbeddedQuarry({ env: conversationStubEnv(stub) });
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  conversationScenario(() => ({ client: quarry.client, stub }));
});
