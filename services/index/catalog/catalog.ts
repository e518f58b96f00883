// The catalog: knowledge bases and documents with their ingestion status. Implementations: SQLite
// (embedded), OpenSearch and Elasticsearch (distributed); all three run testing/catalog.contract.ts.
import type { DocumentRecord, IngestionProgress, KnowledgeBase, ModelChange, NewDocumentVersion } from "../../../lib/domain.ts";

export type { NewDocumentVersion };

export type NewKnowledgeBase = Pick<KnowledgeBase, "name" | "description" | "embeddingModel" | "embeddingDimension" | "chunking">;

/** What UpdateKnowledgeBase may change; absent fields are kept. */
export type KnowledgeBaseUpdate = Partial<Pick<KnowledgeBase, "name" | "description" | "chunking">>;

export interface RegisteredDocument {
  document: DocumentRecord;
  /** True when the same content was already there and not failed: nothing needs ingesting. */
  unchanged: boolean;
}

export interface Catalog {
  /** Throws AlreadyExistsError when the name is taken. */
  createKnowledgeBase(input: NewKnowledgeBase): Promise<KnowledgeBase>;
  /**
   * By id or by name; throws NotFoundError. `counts: false` leaves the document and chunk counts 0,
   * for callers that need the settings only where counting costs a search (OpenSearch, Elasticsearch).
   */
  getKnowledgeBase(idOrName: string, options?: { counts?: boolean }): Promise<KnowledgeBase>;
  listKnowledgeBases(): Promise<KnowledgeBase[]>;
  /**
   * Applies the update (a trimmed, checked name; whole chunking settings) and bumps updated_at.
   * Throws NotFoundError, and AlreadyExistsError when another base has the new name.
   */
  updateKnowledgeBase(id: string, update: KnowledgeBaseUpdate): Promise<KnowledgeBase>;
  /** Removes the knowledge base and its documents; throws NotFoundError. */
  deleteKnowledgeBase(id: string): Promise<void>;
  /**
   * Records the state of the knowledge base's change of embedding model; with switchModel the base's
   * embedding model and dimension become the change's target in the same write. Throws NotFoundError.
   */
  saveModelChange(knowledgeBaseId: string, change: ModelChange, options?: { switchModel?: boolean }): Promise<KnowledgeBase>;
  /**
   * Marks documents written while the base's model changes, by whichever index replica wrote them:
   * the change embeds them again from their live chunks before it switches. Idempotent; the marks
   * are seen by modelChangeDocuments on return.
   */
  markModelChangeDocuments(knowledgeBaseId: string, documentIds: string[]): Promise<void>;
  /** The base's marked documents, sorted. */
  modelChangeDocuments(knowledgeBaseId: string): Promise<string[]>;
  /** Forgets the base's marks (a change starting again, or over). */
  clearModelChangeDocuments(knowledgeBaseId: string): Promise<void>;

  /**
   * Records a new version of the document named fileName in the knowledge base (the document id is
   * stable per knowledge base and file name). Identical content that is not failed is left alone
   * and reported unchanged; registering the same version twice is idempotent.
   */
  registerDocument(input: NewDocumentVersion): Promise<RegisteredDocument>;
  /**
   * Stores whole records (status, counts, flag as given) of documents an import brings into a base,
   * in one write: ids are documentIdFor(base, file name) and none may be stored yet
   * (AlreadyExistsError). Listings see them on return. Throws NotFoundError for no such base.
   */
  importDocuments(knowledgeBaseId: string, documents: DocumentRecord[]): Promise<void>;
  /** Throws NotFoundError. */
  getDocument(id: string): Promise<DocumentRecord>;
  listDocuments(knowledgeBaseId: string): Promise<DocumentRecord[]>;
  /**
   * Applies a stage's progress. Progress for an older version than the document's current one is
   * ignored (returns null), as is progress for an unknown document; a ready or failed version never
   * goes back to an earlier phase.
   */
  applyProgress(progress: IngestionProgress): Promise<DocumentRecord | null>;
  /** Throws NotFoundError. */
  setDocumentEnabled(id: string, enabled: boolean): Promise<DocumentRecord>;
  /** Replaces the document's metadata, keeping its version (a source item that moved); throws NotFoundError. */
  setDocumentMetadata(id: string, metadata: Record<string, string>): Promise<DocumentRecord>;
  /** Throws NotFoundError. */
  deleteDocument(id: string): Promise<void>;
}
