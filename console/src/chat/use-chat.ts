// One conversation through the streaming Chat RPC: status, text deltas, citations and the final
// event with the citation checks. The first event names the stored conversation and turn; a
// follow-up names only the conversation, which keeps its assistant or knowledge bases.
import { useCallback, useRef, useState } from "react";
import type { CitationCheck, Turn as StoredTurn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { ChatStage } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError, isAbort } from "../api/errors.ts";

export interface TurnMeta {
  model: string;
  extractive: boolean;
  chunksInContext: number;
  unsupported: number;
  dropped: number;
  /** False when the knowledge bases do not answer the question: the citations are then the closest passages. */
  answered: boolean;
  answeredReason: string;
}

export interface Turn {
  question: string;
  answer: string;
  citations: Citation[];
  stage: "retrieving" | "generating" | "done";
  checks: CitationCheck[];
  meta?: TurnMeta;
  turnId?: string;
  error?: string;
}

/** What a new conversation answers from: an assistant, or knowledge bases named directly. */
export type ChatScope = { assistant: string } | { knowledgeBases: string[] };

export function fromStored(t: StoredTurn): Turn {
  const p = t.provenance;
  return {
    question: t.question,
    answer: t.answer,
    citations: t.citations,
    stage: "done",
    checks: p?.citationChecks ?? [],
    meta: p && {
      model: p.model,
      extractive: p.extractive,
      chunksInContext: p.context.length,
      unsupported: p.unsupportedMarkers,
      dropped: p.markersDropped.length,
      // A turn stored before evidence was judged has no verdict: it was given as an answer.
      answered: p.answered ?? true,
      answeredReason: p.answeredReason,
    },
    turnId: t.id,
    error: p?.error || undefined,
  };
}

/** `onTurnStored`: a turn has ended (answered, failed or stopped) and its conversation is stored. */
export function useChat({ onTurnStored }: { onTurnStored?: () => void } = {}) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [conversationId, setConversationId] = useState<string>();
  const conversation = useRef<string>(undefined);
  const abort = useRef<AbortController>(undefined);
  const update = (change: (t: Turn) => Turn) => setTurns((ts) => [...ts.slice(0, -1), change(ts[ts.length - 1])]);

  const ask = useCallback(
    async (question: string, scope: ChatScope) => {
      abort.current?.abort();
      const controller = new AbortController();
      abort.current = controller;
      setTurns((ts) => [...ts, { question, answer: "", citations: [], checks: [], stage: "retrieving" }]);
      const request = conversation.current ? { question, conversationId: conversation.current } : { question, ...scope };
      try {
        for await (const { event } of quarry.chat(request, { signal: controller.signal })) {
          const e = event?.event;
          if (e?.case === "started") {
            conversation.current = e.value.conversationId;
            setConversationId(e.value.conversationId);
            update((t) => ({ ...t, turnId: e.value.turnId }));
          } else if (e?.case === "status") update((t) => ({ ...t, stage: e.value.stage === ChatStage.GENERATING ? "generating" : "retrieving" }));
          else if (e?.case === "text") update((t) => ({ ...t, stage: "generating", answer: t.answer + e.value.text }));
          else if (e?.case === "citation") update((t) => ({ ...t, citations: [...t.citations, e.value] }));
          else if (e?.case === "final") {
            const f = e.value;
            const meta = {
              model: f.model,
              extractive: f.extractive,
              chunksInContext: f.retrieval?.chunksInContext ?? 0,
              unsupported: f.unsupportedMarkers,
              dropped: f.droppedMarkers,
              answered: f.answered,
              answeredReason: f.answeredReason,
            };
            update((t) => ({ ...t, checks: f.citationChecks, meta }));
          }
        }
        update((t) => ({ ...t, stage: "done" }));
      } catch (err) {
        update((t) => ({ ...t, stage: "done", error: isAbort(err) ? "stopped" : describeError(err) }));
      }
      onTurnStored?.();
    },
    [onTurnStored],
  );

  /** Shows a stored conversation; the next question continues it. */
  const open = useCallback(async (id: string) => {
    abort.current?.abort();
    const res = await quarry.getConversation({ conversationId: id });
    conversation.current = id;
    setConversationId(id);
    setTurns(res.turns.map(fromStored));
  }, []);

  const reset = useCallback(() => {
    abort.current?.abort();
    conversation.current = undefined;
    setConversationId(undefined);
    setTurns([]);
  }, []);

  const stop = useCallback(() => abort.current?.abort(), []);
  return { turns, conversationId, ask, open, reset, stop, busy: turns.length > 0 && turns[turns.length - 1].stage !== "done" };
}
