// Creating, reading, changing and deleting assistants: the rules around the store. An assistant
// mounts at least one knowledge base, each named once and resolved to its id (so a renamed base
// stays mounted); top-k values are bounded; names cannot pass for ids.
import { randomBytes } from "node:crypto";
import type { Assistant, AssistantSettings } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { assistantSettingsFromJson, assistantSettingsToJson } from "./assistant-proto.ts";
import type { AssistantStore, StoredAssistant } from "./assistant-store.ts";
import type { Catalog } from "../catalog/catalog.ts";
import { checkConvexAlpha } from "../search/convex-fusion.ts";

const ID_PREFIX = "as_";
/** A base contributes, and an assistant retrieves, at most this many chunks. */
export const MAX_ASSISTANT_TOP_K = 100;
const MAX_NAME_CHARS = 200;
const MAX_PROMPT_CHARS = 20_000;

export class AssistantRegistry {
  constructor(
    private readonly store: AssistantStore,
    private readonly catalog: Pick<Catalog, "getKnowledgeBase">,
  ) {}

  /**
   * `imported` is an import's (portability/): the id it already wrote into the corrections'
   * metadata, and the corrections base it made. A caller's request never sets either.
   */
  async create(input: AssistantSettings, imported?: { id: string; correctionsKnowledgeBaseId: string }): Promise<Assistant> {
    const now = new Date();
    const checked = await this.check(input);
    // Made by the first correction (or an import), never chosen by a caller (see update).
    checked.correctionsKnowledgeBaseId = imported?.correctionsKnowledgeBaseId ?? "";
    const stored = await this.store.create({ id: imported?.id ?? newAssistantId(), name: checked.name, createdAt: now, updatedAt: now, config: configOf(checked) });
    return toAssistant(stored);
  }

  async get(idOrName: string): Promise<Assistant> {
    if (!idOrName.trim()) throw new InvalidInputError("name the assistant (its id or name)");
    return toAssistant(await this.store.get(idOrName.trim()));
  }

  async list(): Promise<Assistant[]> {
    return (await this.store.list()).map(toAssistant);
  }

  async update(idOrName: string, input: AssistantSettings): Promise<Assistant> {
    const current = await this.store.get(idOrName.trim());
    const checked = await this.check(input);
    // The corrections base is Quarry's to set (the gateway's CorrectAnswer; the public
    // UpdateAssistant clears the field), so an update that leaves it empty keeps the stored one.
    const corrections = input.correctionsKnowledgeBaseId.trim();
    checked.correctionsKnowledgeBaseId = corrections ? (await this.catalog.getKnowledgeBase(corrections)).id : toAssistant(current).correctionsKnowledgeBaseId;
    return toAssistant(await this.store.update(current.id, { name: checked.name, config: configOf(checked), updatedAt: new Date() }));
  }

  async delete(idOrName: string): Promise<Assistant> {
    if (!idOrName.trim()) throw new InvalidInputError("name the assistant to delete (its id or name)");
    return toAssistant(await this.store.delete(idOrName.trim()));
  }

  /** The assistant as it will be stored: trimmed, bases resolved to ids, limits checked. */
  private async check(input: AssistantSettings): Promise<AssistantSettings> {
    const name = input.name.trim();
    if (!name) throw new InvalidInputError("an assistant needs a name");
    if (name.length > MAX_NAME_CHARS) throw new InvalidInputError(`an assistant's name is at most ${MAX_NAME_CHARS} characters`);
    if (name.toLowerCase().startsWith(ID_PREFIX)) {
      throw new InvalidInputError(`an assistant's name may not start with "${ID_PREFIX}": that is how assistant ids look, and "${name}" could be taken for one`);
    }
    if (input.systemPrompt.length > MAX_PROMPT_CHARS) throw new InvalidInputError(`the system prompt is at most ${MAX_PROMPT_CHARS.toLocaleString("en-US")} characters`);
    if (input.knowledgeBases.length === 0) throw new InvalidInputError(`the assistant "${name}" needs at least one knowledge base`);
    const retrieval = input.retrieval;
    if (retrieval && retrieval.topK > MAX_ASSISTANT_TOP_K) throw new InvalidInputError(`the assistant's top_k is at most ${MAX_ASSISTANT_TOP_K}, got ${retrieval.topK}`);
    if (retrieval && (!Number.isFinite(retrieval.minScore) || retrieval.minScore < 0)) throw new InvalidInputError(`min_score must be 0 or more, got ${retrieval.minScore}`);
    if (retrieval?.fusion?.method === "convex" && retrieval.fusion.alpha !== undefined) checkConvexAlpha(retrieval.fusion.alpha);
    const mounts = await Promise.all(
      input.knowledgeBases.map(async (mount) => {
        if (!mount.knowledgeBase.trim()) throw new InvalidInputError("each mounted knowledge base needs an id or a name");
        if (mount.topK > MAX_ASSISTANT_TOP_K) throw new InvalidInputError(`a knowledge base's top_k is at most ${MAX_ASSISTANT_TOP_K}, got ${mount.topK} for ${mount.knowledgeBase}`);
        const kb = await this.catalog.getKnowledgeBase(mount.knowledgeBase.trim());
        return { knowledgeBase: kb.id, topK: mount.topK, priority: mount.priority, label: mount.knowledgeBase };
      }),
    );
    const seen = new Set<string>();
    for (const m of mounts) {
      if (seen.has(m.knowledgeBase)) throw new InvalidInputError(`the knowledge base ${m.label} is mounted twice`);
      seen.add(m.knowledgeBase);
    }
    return { ...input, name, knowledgeBases: mounts.map(({ label: _, ...m }) => m) };
  }
}

export function newAssistantId(): string {
  return `${ID_PREFIX}${randomBytes(8).toString("hex")}`;
}

/** What the store keeps beyond id, name and times. */
function configOf(settings: AssistantSettings) {
  return assistantSettingsToJson({ ...settings, name: "" });
}

function toAssistant(stored: StoredAssistant): Assistant {
  return { ...assistantSettingsFromJson(stored.config), id: stored.id, name: stored.name, createdAt: stored.createdAt, updatedAt: stored.updatedAt };
}
