// The API key a person typed, kept for this browser tab only (sessionStorage): closing the tab
// forgets it, and no other site can read it.
const STORAGE = "quarry.apiKey";

type Listener = () => void;
const listeners = new Set<Listener>();

export function sessionKey(): string | undefined {
  return sessionStorage.getItem(STORAGE) ?? undefined;
}

export function setSessionKey(key: string | undefined): void {
  if (key) sessionStorage.setItem(STORAGE, key);
  else sessionStorage.removeItem(STORAGE);
  for (const listener of listeners) listener();
}

export function onSessionKeyChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
