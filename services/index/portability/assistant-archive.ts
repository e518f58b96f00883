// The assistants of a knowledge-base archive (docs/PORTABILITY.md, version 2): on export, each
// assistant that mounts the base with its mount of it (its other mounts are left out, the manifest
// says which) and its corrections base; on import, the names they get here, decided before anything
// is made, and the assistants themselves, made last, mounting the new base.
import type { Assistant, AssistantSettings, DocumentRecord, KnowledgeBase } from "../../../lib/domain.ts";
import { AlreadyExistsError, FailedPreconditionError, NotFoundError } from "../../../lib/errors.ts";
import { assistantSettingsFromJson, assistantSettingsToJson } from "../assistants/assistant-proto.ts";
import { newAssistantId, type AssistantRegistry } from "../assistants/assistant-registry.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { ArchivedAssistant, ArchivedKnowledgeBase } from "./archive-format.ts";

/** An exported assistant's corrections base with its documents, listed once so the header's count and the lines agree. */
export interface ExportedCorrections {
  knowledgeBase: KnowledgeBase;
  documents: DocumentRecord[];
}

export interface ExportedAssistants {
  archived: ArchivedAssistant[];
  /** By the assistants' positions in `archived`. */
  corrections: (ExportedCorrections | undefined)[];
  manifest: string[];
}

export function archivedKnowledgeBase(kb: KnowledgeBase): ArchivedKnowledgeBase {
  return { name: kb.name, description: kb.description, embeddingModel: kb.embeddingModel, embeddingDimension: kb.embeddingDimension, chunking: kb.chunking };
}

export function refuseModelChange(kb: KnowledgeBase): void {
  if (kb.modelChange?.state === "running") {
    throw new FailedPreconditionError(`knowledge base ${kb.name} is changing its embedding model to ${kb.modelChange.targetModel}; export it when that is done`);
  }
}

/** The assistants mounting `kb`, as the archive keeps them. */
export async function exportedAssistants(registry: AssistantRegistry, catalog: Catalog, kb: KnowledgeBase): Promise<ExportedAssistants> {
  const out: ExportedAssistants = { archived: [], corrections: [], manifest: [] };
  for (const assistant of await registry.list()) {
    const mount = assistant.knowledgeBases.find((m) => m.knowledgeBase === kb.id);
    if (!mount) continue;
    for (const other of assistant.knowledgeBases.filter((m) => m !== mount)) {
      const name = await catalog.getKnowledgeBase(other.knowledgeBase, { counts: false }).then(
        (b) => b.name,
        () => other.knowledgeBase,
      );
      out.manifest.push(`the assistant ${assistant.name}'s mount of the knowledge base ${name} (top-k ${other.topK}, priority ${other.priority}) was left out: the archive does not hold that base`);
    }
    const corrections = await correctionsOf(catalog, assistant);
    out.archived.push({
      // Its settings but its mounts and corrections base, which the import makes anew.
      assistant: assistantSettingsToJson({ ...assistant, knowledgeBases: [], correctionsKnowledgeBaseId: "" }),
      mount: { topK: mount.topK, priority: mount.priority },
      ...(corrections ? { corrections: { knowledgeBase: archivedKnowledgeBase(corrections.knowledgeBase), documents: corrections.documents.length } } : {}),
    });
    out.corrections.push(corrections);
  }
  return out;
}

async function correctionsOf(catalog: Catalog, assistant: Assistant): Promise<ExportedCorrections | undefined> {
  if (!assistant.correctionsKnowledgeBaseId) return undefined;
  let knowledgeBase: KnowledgeBase;
  try {
    knowledgeBase = await catalog.getKnowledgeBase(assistant.correctionsKnowledgeBaseId, { counts: false });
  } catch (error) {
    // An operator deleted it: the assistant has no corrections until its next one.
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  refuseModelChange(knowledgeBase);
  return { knowledgeBase, documents: await catalog.listDocuments(knowledgeBase.id) };
}

/** What an archived assistant becomes here: its id (written into its corrections first), its name, its corrections base's name. */
export interface PlannedAssistant {
  id: string;
  name: string;
  correctionsBaseName?: string;
}

/**
 * Names the archive's assistants before anything is made: an assistant keeps its name when it is
 * free here, else takes the new base's name in brackets ("keeper (handbook-copy)", as `--as` names
 * the base); when that is taken too, or its corrections base's name is, the import is refused.
 */
export async function planAssistants(registry: AssistantRegistry, catalog: Catalog, archived: readonly ArchivedAssistant[], baseName: string): Promise<PlannedAssistant[]> {
  const planned: PlannedAssistant[] = [];
  for (const entry of archived) {
    const wanted = String(entry.assistant.name);
    const name = (await isFree((n) => registry.get(n), wanted)) ? wanted : `${wanted} (${baseName})`;
    if (name !== wanted && !(await isFree((n) => registry.get(n), name))) {
      throw new AlreadyExistsError(`the archive's assistant ${wanted} cannot be made: assistants named ${wanted} and ${name} exist here already; import under another name (--as) or delete one of them`);
    }
    const correctionsBaseName = entry.corrections ? `${name} · corrections` : undefined;
    if (correctionsBaseName && !(await isFree((n) => catalog.getKnowledgeBase(n, { counts: false }), correctionsBaseName))) {
      throw new AlreadyExistsError(`the archive's assistant ${wanted} would keep its corrections in the knowledge base ${correctionsBaseName}, which exists here already; delete it or import under another name (--as)`);
    }
    planned.push({ id: newAssistantId(), name, correctionsBaseName });
  }
  return planned;
}

async function isFree(lookUp: (name: string) => Promise<unknown>, name: string): Promise<boolean> {
  try {
    await lookUp(name);
    return false;
  } catch (error) {
    if (error instanceof NotFoundError) return true;
    throw error;
  }
}

/** The archived assistant as created here: its planned name, mounting the new base, with its corrections base. */
export function importedAssistant(entry: ArchivedAssistant, plan: PlannedAssistant, knowledgeBaseId: string): AssistantSettings {
  const assistant = assistantSettingsFromJson(entry.assistant);
  return { ...assistant, name: plan.name, knowledgeBases: [{ knowledgeBase: knowledgeBaseId, topK: entry.mount.topK, priority: entry.mount.priority }] };
}
