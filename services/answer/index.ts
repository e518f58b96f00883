// The answer service's public face: what app/, cli/, bench/, eval/ and test/ may use (the import
// rules in .dependency-cruiser.cjs allow nothing else of this folder outside it).
export { assembleAnswer } from "./main.ts";
export { answerRoutes } from "./routes.ts";
export { answerApplication } from "./server.ts";
export { installChatModel } from "./chat-models/local-model-install.ts";
export { DEFAULT_MAX_QUESTION_CHARS, MIN_KNOWN_TOKEN_SHARE } from "./retrieval/retrieval-stage.ts";
export { EXTRACTIVE_NOTICES } from "./answering/extractive-answerer.ts";
export { CORRECTION_RULE } from "./answering/correction-answer.ts";
export { cosine } from "./answering/citation-verifier.ts";
export { termOverlap } from "./retrieval/correction-match.ts";
export { REWRITE_INSTRUCTION } from "./conversation/follow-up-rewriter.ts";
export { ordinal } from "./debug/debug-verdict.ts";
// The extractive answerer and the evidence gate alone, for eval/answers-replay.ts (answering stored contexts again offline).
export { extractiveAnswer } from "./answering/extractive-answerer.ts";
export { judgeEvidence } from "./answering/evidence-support.ts";
export type { ContextChunk } from "./answering/context-builder.ts";
