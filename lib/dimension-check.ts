import { FailedPreconditionError } from "./errors.ts";

/** Where the vectors are headed and what made them, so a mismatch names both sides. */
export interface DimensionContext {
  /** The knowledge base (name or id) whose index fixes the dimension. */
  knowledgeBase: string;
  /** The model the knowledge base was created with. */
  expectedModel: string;
  /** The model that produced these vectors. */
  actualModel: string;
}

/**
 * Refuses vectors whose length differs from the knowledge base's dimension. Vectors of a different
 * model would be stored or searched as if comparable and silently return nonsense, so this is a
 * hard error rather than a warning.
 */
export function assertDimension(vectors: readonly Float32Array[], expected: number, context: DimensionContext): void {
  const wrong = vectors.find((v) => v.length !== expected);
  if (!wrong) return;
  throw new FailedPreconditionError(
    `knowledge base ${context.knowledgeBase} expects ${expected}-dim vectors from model ${context.expectedModel}; ` +
      `the embedder produced ${wrong.length} from ${context.actualModel}. ` +
      `Configure the embedder the knowledge base was created with, or create a new knowledge base for this model.`,
  );
}
