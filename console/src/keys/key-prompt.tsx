// Asked for when the gateway answers UNAUTHENTICATED: the key is kept for this tab only.
import { useState } from "react";
import { setSessionKey } from "../api/session-key.ts";

export function KeyPrompt({ reason }: { reason: string }) {
  const [key, setKey] = useState("");
  return (
    <div className="overlay">
      <form
        className="dialog"
        aria-label="API key"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) setSessionKey(key.trim());
        }}
      >
        <h2>This Quarry needs an API key</h2>
        <p className="muted">{reason}</p>
        <label>
          API key
          <input type="password" autoFocus autoComplete="off" placeholder="qk_…" value={key} onChange={(e) => setKey(e.target.value)} />
        </label>
        <p className="muted small">Kept in this tab until you close it, and sent as <code>authorization: Bearer</code>.</p>
        <button type="submit" className="primary" disabled={!key.trim()}>
          Use this key
        </button>
      </form>
    </div>
  );
}
