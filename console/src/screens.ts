// The console's top-level screens, in navigation order. A screen names the RPCs it stands on and
// shows only when the generated client has them all, so a console built against an older contract
// never offers a screen its gateway cannot serve. Screens for assistants, conversations,
// corrections and turn debugging join this list, with their RPCs, when the answer layer adds them.
export interface ScreenEntry {
  id: "knowledge-bases" | "preview" | "retrieval" | "assistants" | "chat" | "keys" | "system";
  path: string;
  label: string;
  requires: string[];
}

export const SCREENS: ScreenEntry[] = [
  { id: "knowledge-bases", path: "/", label: "Knowledge bases", requires: ["listKnowledgeBases"] },
  { id: "preview", path: "/preview", label: "Chunk preview", requires: ["previewChunks"] },
  { id: "retrieval", path: "/retrieval", label: "Retrieval test", requires: ["search"] },
  { id: "assistants", path: "/assistants", label: "Assistants", requires: ["listAssistants", "createAssistant", "updateAssistant", "deleteAssistant"] },
  { id: "chat", path: "/chat", label: "Chat", requires: ["chat"] },
  { id: "keys", path: "/keys", label: "API keys", requires: ["listApiKeys", "createApiKey", "revokeApiKey"] },
  { id: "system", path: "/system", label: "System", requires: ["getSystemStatus", "redriveDeadLetters"] },
];
