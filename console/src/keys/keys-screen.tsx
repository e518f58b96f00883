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

const ROLE_NAMES: Record<ApiKeyRole, string> = {
  [ApiKeyRole.UNSPECIFIED]: "unknown",
  [ApiKeyRole.READER]: "reader",
  [ApiKeyRole.EDITOR]: "editor",
  [ApiKeyRole.ADMIN]: "admin",
};

export function KeysScreen() {
  const keys = useLoad(() => quarry.listApiKeys({}).then((r) => r.apiKeys), []);
  const [created, setCreated] = useState<{ name: string; secret: string }>();
  const [error, setError] = useState<string>();

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
        onCreated={(name, secret, role) => {
          // The first key turns keys on: a tab without one keeps working with its new admin key.
          if (!sessionKey() && role === ApiKeyRole.ADMIN) setSessionKey(secret, { reload: false });
          setCreated({ name, secret });
          keys.reload();
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
            {sessionKey() !== created.secret && (
              <button type="button" onClick={() => setSessionKey(created.secret)}>
                Use it in this tab
              </button>
            )}
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
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
                  <ConfirmButton label="Revoke" confirmLabel={`Revoke ${k.name}`} onConfirm={() => revoke(k.id)} />
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
