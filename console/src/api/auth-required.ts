// Raised when a call comes back UNAUTHENTICATED: the shell then asks for a key. Calls made in the
// meantime fail as usual; the screen reloads once a key is given.
type Listener = (message: string) => void;
const listeners = new Set<Listener>();

export function announceAuthRequired(message: string): void {
  for (const listener of listeners) listener(message);
}

export function onAuthRequired(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
