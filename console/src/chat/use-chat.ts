// One question at a time through the streaming Chat RPC: status, text deltas, citations, and the
// final event with the citation checks.
import { useCallback, useRef, useState } from "react";
import type { ChatFinal } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { ChatStage } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError, isAbort } from "../api/errors.ts";

export interface Turn {
  question: string;
  answer: string;
  citations: Citation[];
  stage: "retrieving" | "generating" | "done";
  final?: ChatFinal;
  error?: string;
}

export function useChat() {
  const [turns, setTurns] = useState<Turn[]>([]);
  const abort = useRef<AbortController>(undefined);
  const update = (change: (t: Turn) => Turn) => setTurns((ts) => [...ts.slice(0, -1), change(ts[ts.length - 1])]);

  const ask = useCallback(async (question: string, knowledgeBases: string[]) => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setTurns((ts) => [...ts, { question, answer: "", citations: [], stage: "retrieving" }]);
    try {
      for await (const { event } of quarry.chat({ question, knowledgeBases }, { signal: controller.signal })) {
        const e = event?.event;
        if (e?.case === "status") update((t) => ({ ...t, stage: e.value.stage === ChatStage.GENERATING ? "generating" : "retrieving" }));
        else if (e?.case === "text") update((t) => ({ ...t, stage: "generating", answer: t.answer + e.value.text }));
        else if (e?.case === "citation") update((t) => ({ ...t, citations: [...t.citations, e.value] }));
        else if (e?.case === "final") update((t) => ({ ...t, final: e.value }));
      }
      update((t) => ({ ...t, stage: "done" }));
    } catch (err) {
      update((t) => ({ ...t, stage: "done", error: isAbort(err) ? "stopped" : describeError(err) }));
    }
  }, []);

  const stop = useCallback(() => abort.current?.abort(), []);
  return { turns, ask, stop, busy: turns.length > 0 && turns[turns.length - 1].stage !== "done" };
}
