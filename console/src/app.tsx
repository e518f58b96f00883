// The shell: navigation, the key prompt, and the screen the path names.
import { useEffect, useState } from "react";
import { offers } from "./api/client.ts";
import { onAuthRequired } from "./api/auth-required.ts";
import { onSessionKeyChange, sessionKey, setSessionKey } from "./api/session-key.ts";
import { AssistantsScreen } from "./assistants/assistants-screen.tsx";
import { ChatScreen } from "./chat/chat-screen.tsx";
import { DocumentScreen } from "./document/document-screen.tsx";
import { DocumentsScreen } from "./documents/documents-screen.tsx";
import { KeyPrompt } from "./keys/key-prompt.tsx";
import { KeysScreen } from "./keys/keys-screen.tsx";
import { KnowledgeBasesScreen } from "./knowledge-bases/knowledge-bases-screen.tsx";
import { PreviewScreen } from "./preview/preview-screen.tsx";
import { RetrievalScreen } from "./retrieval/retrieval-screen.tsx";
import { SystemScreen } from "./system/system-screen.tsx";
import { link, usePath } from "./router.ts";
import { SCREENS, type ScreenEntry } from "./screens.ts";

const VISIBLE = SCREENS.filter((s) => s.requires.every(offers));

export function App() {
  const path = usePath();
  const [keyNeeded, setKeyNeeded] = useState<string>();
  const [hasKey, setHasKey] = useState(Boolean(sessionKey()));
  // Bumped when the key changes, so every screen loads again with it.
  const [session, setSession] = useState(0);
  useEffect(() => onAuthRequired((message) => setKeyNeeded(message)), []);
  useEffect(
    () =>
      onSessionKeyChange((reload) => {
        setHasKey(Boolean(sessionKey()));
        setKeyNeeded(undefined);
        if (reload) setSession((s) => s + 1);
      }),
    [],
  );

  return (
    <div className="shell">
      <header className="topbar">
        <a className="brand" href="/" onClick={link("/")}>
          Quarry
        </a>
        <nav aria-label="Screens">
          {VISIBLE.map((s) => (
            <a key={s.id} href={s.path} className={isCurrent(s, path) ? "current" : ""} aria-current={isCurrent(s, path) ? "page" : undefined} onClick={link(s.path)}>
              {s.label}
            </a>
          ))}
        </nav>
        {hasKey && (
          <button type="button" className="link" onClick={() => setSessionKey(undefined)}>
            Forget key
          </button>
        )}
      </header>
      <main key={session}>{screenFor(path)}</main>
      {keyNeeded !== undefined && <KeyPrompt reason={keyNeeded} />}
    </div>
  );
}

function screenFor(path: string) {
  const opened = /^\/kb\/([^/]+)\/doc\/([^/]+)\/?$/.exec(path);
  if (opened && offers("listDocumentChunks")) return <DocumentScreen knowledgeBase={decodeURIComponent(opened[1])} documentId={decodeURIComponent(opened[2])} />;
  const kb = /^\/kb\/([^/]+)\/?$/.exec(path);
  if (kb) return <DocumentsScreen knowledgeBase={decodeURIComponent(kb[1])} />;
  const screen = VISIBLE.find((s) => s.path === path);
  switch (screen?.id) {
    case "knowledge-bases":
      return <KnowledgeBasesScreen />;
    case "preview":
      return <PreviewScreen />;
    case "retrieval":
      return <RetrievalScreen />;
    case "assistants":
      return <AssistantsScreen />;
    case "chat":
      return <ChatScreen />;
    case "keys":
      return <KeysScreen />;
    case "system":
      return <SystemScreen />;
    default:
      return (
        <section className="screen">
          <h1>Not found</h1>
          <p>
            Nothing lives at <code>{path}</code>. <a href="/" onClick={link("/")}>Knowledge bases</a>
          </p>
        </section>
      );
  }
}

function isCurrent(screen: ScreenEntry, path: string): boolean {
  return screen.path === "/" ? path === "/" || path.startsWith("/kb/") : path === screen.path;
}
