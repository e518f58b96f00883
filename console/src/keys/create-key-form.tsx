import { useEffect, useState } from "react";
import { ApiKeyRole } from "../../../gen/quarry/common/v1/api_key_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";

/**
 * `firstKey`: no key exists yet (undefined while the list loads). `locksOut` says whether creating a
 * key of this role would leave this tab without access to the keys page: it is then created only
 * after a confirmation that says so.
 */
export function CreateKeyForm({
  firstKey,
  locksOut,
  onCreated,
}: {
  firstKey: boolean | undefined;
  locksOut: (role: ApiKeyRole) => boolean;
  onCreated: (name: string, secret: string, role: ApiKeyRole) => void;
}) {
  const [name, setName] = useState("");
  // The first key turns keys on, and only an admin key can then manage them.
  const [role, setRole] = useState(ApiKeyRole.ADMIN);
  const [roleChosen, setRoleChosen] = useState(false);
  useEffect(() => {
    if (firstKey === false && !roleChosen) setRole(ApiKeyRole.READER);
  }, [firstKey, roleChosen]);
  const [bases, setBases] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const roleName = ApiKeyRole[role].toLowerCase();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (locksOut(role) && !confirming) {
      setConfirming(true);
      return;
    }
    setConfirming(false);
    setBusy(true);
    setError(undefined);
    try {
      const knowledgeBases = bases.split(",").map((b) => b.trim()).filter(Boolean);
      const res = await quarry.createApiKey({ name: name.trim(), role, knowledgeBases });
      onCreated(name.trim(), res.secret, role);
      setName("");
      setBases("");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="panel form-grid" aria-label="New API key" onSubmit={submit}>
      <label>
        Name
        <input required value={name} onChange={(e) => setName(e.target.value)} placeholder="ci-reader" />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => (setRole(Number(e.target.value)), setRoleChosen(true), setConfirming(false))}>
          <option value={ApiKeyRole.READER}>reader</option>
          <option value={ApiKeyRole.EDITOR}>editor</option>
          <option value={ApiKeyRole.ADMIN}>admin</option>
        </select>
      </label>
      <label className="wide">
        Knowledge bases (comma-separated; empty for all)
        <input value={bases} onChange={(e) => setBases(e.target.value)} disabled={role === ApiKeyRole.ADMIN} placeholder="handbook, 手册" />
      </label>
      <ErrorNote error={error} />
      {confirming && (
        <p className="wide warning" role="alert">
          This is the first key: once it exists every call needs a key, and {roleName === "admin" ? "an" : "a"} {roleName} key cannot manage keys. This
          console would lose access to this page, and only restarting Quarry with <code>QUARRY_API_KEY</code> gives it back. Create an admin key
          first to keep it.
        </p>
      )}
      <div className="form-actions wide">
        {confirming && (
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        )}
        <button type="submit" className={confirming ? "danger" : "primary"} disabled={busy || !name.trim()}>
          {confirming ? `Create the ${roleName} key and lose access` : "Create key"}
        </button>
      </div>
    </form>
  );
}
