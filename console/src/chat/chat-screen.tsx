// Chat: conversations in a side list, the one open in the middle, the cited passages beside it.
// A new conversation answers from an assistant or from chosen knowledge bases; an opened one
// continues with what it was held over.
import { useState } from "react";
import type { Conversation } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { useLoad } from "../use-load.ts";
import { ChatScopePicker } from "./chat-scope.tsx";
import { ConversationList } from "./conversation-list.tsx";
import { QuestionBox } from "./question-box.tsx";
import { SourcesPanel } from "./sources-panel.tsx";
import { TurnView } from "./turn-view.tsx";
import { useChat } from "./use-chat.ts";

export function ChatScreen() {
  const [bases, setBases] = useState<string[]>([]);
  const [assistant, setAssistant] = useState(() => new URLSearchParams(window.location.search).get("assistant") ?? "");
  const assistants = useLoad(() => quarry.listAssistants({}).then((r) => r.assistants), []);
  const knowledgeBases = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases), []);
  const conversations = useLoad(() => quarry.listConversations({}).then((r) => r.conversations), []);
  const chat = useChat({ onTurnStored: conversations.reload });
  const [selected, setSelected] = useState<{ turn: number; marker: number }>();
  const [error, setError] = useState<string>();
  const last = chat.turns.length - 1;
  const sourcesTurn = selected?.turn ?? last;

  const describe = (c: Conversation) => {
    if (c.assistantId) return assistants.data?.find((a) => a.id === c.assistantId)?.name ?? "an assistant";
    return c.knowledgeBaseIds.map((id) => knowledgeBases.data?.find((b) => b.id === id)?.name ?? id).join(", ");
  };
  const current = conversations.data?.find((c) => c.id === chat.conversationId);
  const run = (action: Promise<unknown>) => {
    setError(undefined);
    setSelected(undefined);
    action.catch((e) => setError(describeError(e)));
  };

  return (
    <section className="screen chat-screen">
      <div className="screen-head">
        <h1>Chat</h1>
      </div>
      <div className="chat-layout">
        <ConversationList
          conversations={conversations.data ?? []}
          error={conversations.error}
          current={chat.conversationId}
          describe={describe}
          onOpen={(id) => {
            // A new conversation started after this one answers from the same assistant or bases.
            const c = conversations.data?.find((x) => x.id === id);
            const owner = assistants.data?.find((a) => a.id === c?.assistantId);
            setAssistant(owner?.name ?? "");
            if (!owner && c) setBases(c.knowledgeBaseIds.map((kb) => knowledgeBases.data?.find((b) => b.id === kb)?.name ?? kb));
            run(chat.open(id));
          }}
          onNew={() => run(Promise.resolve(chat.reset()))}
          onDelete={(id) =>
            run(
              quarry.deleteConversation({ conversationId: id }).then(() => {
                if (id === chat.conversationId) chat.reset();
                conversations.reload();
              }),
            )
          }
        />
        <div className="conversation">
          {chat.conversationId ? (
            <p className="muted small continuing">
              Continuing “{current?.title ?? "this conversation"}” with {current ? describe(current) : "its knowledge bases"}.
            </p>
          ) : (
            <ChatScopePicker assistants={assistants.data ?? []} assistant={assistant} bases={bases} onAssistant={setAssistant} onBases={setBases} />
          )}
          <ErrorNote error={error} />
          {chat.turns.length === 0 && <p className="empty">Ask about what the chosen knowledge bases hold. Answers cite their sources as [n].</p>}
          {chat.turns.map((turn, i) => (
            <TurnView key={`${chat.conversationId}-${i}`} turn={turn} correctable={Boolean(current?.assistantId)} onCite={(marker) => setSelected({ turn: i, marker })} />
          ))}
          <QuestionBox
            busy={chat.busy}
            disabled={!chat.conversationId && !assistant && bases.length === 0}
            onStop={chat.stop}
            onAsk={(q) => {
              setSelected(undefined);
              void chat.ask(q, assistant ? { assistant } : { knowledgeBases: bases });
            }}
          />
        </div>
        <SourcesPanel
          citations={chat.turns[sourcesTurn]?.citations ?? []}
          selected={selected?.turn === sourcesTurn ? selected.marker : undefined}
          closest={chat.turns[sourcesTurn]?.meta?.answered === false}
        />
      </div>
    </section>
  );
}
