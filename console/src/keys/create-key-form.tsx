import { useState } from "react";
import { ApiKeyRole } from "../../../gen/quarry/common/v1/api_key_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";

export function CreateKeyForm({ onCreated }: { onCreated: (name: string, secret: string, role: ApiKeyRole) => void }) {
  const [name, setName] = useState("");
  const [role, setRole] = useState(ApiKeyRole.READER);
  const [bases, setBases] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
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
        <select value={role} onChange={(e) => setRole(Number(e.target.value))}>
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
      <div className="form-actions wide">
        <button type="submit" className="primary" disabled={busy || !name.trim()}>
          Create key
        </button>
      </div>
    </form>
  );
}
