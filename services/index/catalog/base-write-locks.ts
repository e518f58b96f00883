// Each knowledge base's write lock, shared or exclusive. The live writes of documents (the indexing
// stage's, a delete, an enable) share it: they touch disjoint records, one document's events arrive
// in order, and the engines write several documents at once (on OpenSearch and Elasticsearch in one
// batch). A change of embedding model takes it exclusively for the steps no live write may slip
// between (begin the shadow, check-and-write a document's shadow vectors, swap, drop). Waiters are
// served in arrival order, so a waiting exclusive holder is not starved by a stream of shared ones.

type Mode = "shared" | "exclusive";

interface Waiter {
  mode: Mode;
  grant(): void;
}

interface BaseLock {
  shared: number;
  exclusive: boolean;
  queue: Waiter[];
}

export class BaseWriteLocks {
  private readonly locks = new Map<string, BaseLock>();

  shared<T>(knowledgeBaseId: string, fn: () => Promise<T>): Promise<T> {
    return this.hold(knowledgeBaseId, "shared", fn);
  }

  exclusive<T>(knowledgeBaseId: string, fn: () => Promise<T>): Promise<T> {
    return this.hold(knowledgeBaseId, "exclusive", fn);
  }

  private async hold<T>(knowledgeBaseId: string, mode: Mode, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(knowledgeBaseId);
    if (!lock) this.locks.set(knowledgeBaseId, (lock = { shared: 0, exclusive: false, queue: [] }));
    await new Promise<void>((grant) => {
      lock.queue.push({ mode, grant });
      this.admit(lock);
    });
    try {
      return await fn();
    } finally {
      if (mode === "shared") lock.shared--;
      else lock.exclusive = false;
      this.admit(lock);
      if (!lock.exclusive && lock.shared === 0 && lock.queue.length === 0) this.locks.delete(knowledgeBaseId);
    }
  }

  /** Grants the waiters at the head of the queue that the current holders allow. */
  private admit(lock: BaseLock): void {
    while (lock.queue.length > 0 && !lock.exclusive) {
      const next = lock.queue[0];
      if (next.mode === "exclusive" && lock.shared > 0) return;
      lock.queue.shift();
      if (next.mode === "exclusive") lock.exclusive = true;
      else lock.shared++;
      next.grant();
    }
  }
}
