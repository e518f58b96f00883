// The API key a person typed, kept for this browser tab only (sessionStorage): closing the tab
// forgets it, and no other site can read it.
const STORAGE = "quarry.apiKey";

/** `reload`: screens should load again with the new key (false when the screen that set it stays). */
type Listener = (reload: boolean) => void;
const listeners = new Set<Listener>();

export function sessionKey(): string | undefined {
  return sessionStorage.getItem(STORAGE) ?? undefined;
}

export function setSessionKey(key: string | undefined, { reload = true } = {}): void {
  if (key) sessionStorage.setItem(STORAGE, key);
  else sessionStorage.removeItem(STORAGE);
  for (const listener of listeners) listener(reload);
}

export function onSessionKeyChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
