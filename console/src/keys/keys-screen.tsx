// API keys (admin): list, create (the secret is shown once), revoke.
import { useState } from "react";
import { ApiKeyRole } from "../../../gen/quarry/common/v1/api_key_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { sessionKey, setSessionKey } from "../api/session-key.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { useLoad } from "../use-load.ts";
import { CreateKeyForm } from "./create-key-form.tsx";

/** The id inside a key ("qk_<id>_<secret>"): which listed key this tab uses. */
const keyIdOf = (key: string | undefined) => (key ? /^qk_([0-9a-f]{16})_/.exec(key)?.[1] : undefined);

const ROLE_NAMES: Record<ApiKeyRole, string> = {
  [ApiKeyRole.UNSPECIFIED]: "unknown",
  [ApiKeyRole.READER]: "reader",
  [ApiKeyRole.EDITOR]: "editor",
  [ApiKeyRole.ADMIN]: "admin",
};

export function KeysScreen() {
  const keys = useLoad(() => quarry.listApiKeys({}).then((r) => r.apiKeys), []);
  const [created, setCreated] = useState<{ name: string; secret: string; lockedOut: boolean }>();
  const [copied, setCopied] = useState<string>();
  const [error, setError] = useState<string>();
  const firstKey = keys.data ? keys.data.length === 0 : undefined;
  const ownKeyId = keyIdOf(sessionKey());

  const copy = async (secret: string) => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("Copied to the clipboard.");
    } catch {
      // No clipboard (a page not served over https or localhost): select it for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(document.querySelector("[data-testid=new-secret]")!);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied("Selected: press Ctrl+C (⌘C) to copy it.");
    }
  };

  const revoke = async (id: string) => {
    setError(undefined);
    try {
      await quarry.revokeApiKey({ apiKey: id });
      keys.reload();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <section className="screen">
      <div className="screen-head">
        <h1>API keys</h1>
        <p className="muted">Once a key exists, every call needs one: make the first an admin key (this tab keeps using it). Readers search and ask; editors also upload; admins also manage keys.</p>
      </div>
      <CreateKeyForm
        firstKey={firstKey}
        locksOut={(role) => firstKey === true && !sessionKey() && role !== ApiKeyRole.ADMIN}
        onCreated={(name, secret, role) => {
          // The first key turns keys on: a tab without one keeps working with its new admin key.
          if (!sessionKey() && role === ApiKeyRole.ADMIN) setSessionKey(secret, { reload: false });
          // A tab that has just locked itself out keeps the secret on screen (reloading the list
          // would ask for a key over it) until the person is done with it.
          const lockedOut = !sessionKey();
          setCreated({ name, secret, lockedOut });
          setCopied(undefined);
          if (!lockedOut) keys.reload();
        }}
      />
      {created && (
        <div className="panel secret" role="status">
          <p>
            The key <strong>{created.name}</strong>, shown this once:
          </p>
          <code className="secret-value" data-testid="new-secret">
            {created.secret}
          </code>
          <div className="form-actions">
            <button type="button" onClick={() => void copy(created.secret)}>
              Copy
            </button>
            {sessionKey() !== created.secret && (
              <button type="button" onClick={() => setSessionKey(created.secret)}>
                Use it in this tab
              </button>
            )}
            <button type="button" onClick={() => (setCreated(undefined), created.lockedOut && keys.reload())}>
              Done
            </button>
          </div>
          {copied && <p className="muted small">{copied}</p>}
        </div>
      )}
      <ErrorNote error={keys.error ?? error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Id</th>
              <th>Role</th>
              <th>Knowledge bases</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data?.map((k) => (
              <tr key={k.id} aria-label={k.name}>
                <td>{k.name}</td>
                <td>
                  <code>{k.id}</code>
                </td>
                <td>{ROLE_NAMES[k.role]}</td>
                <td>{k.knowledgeBaseIds.length ? k.knowledgeBaseIds.join(", ") : "all"}</td>
                <td>{k.createdAt ? new Date(Number(k.createdAt.seconds) * 1000).toLocaleString() : ""}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    confirmLabel={k.id === ownKeyId ? `Revoke ${k.name}: this tab uses it and loses access` : `Revoke ${k.name}`}
                    onConfirm={() => revoke(k.id)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {keys.data?.length === 0 && <p className="empty">No keys: this Quarry answers anyone on this machine without one.</p>}
      </div>
    </section>
  );
}
