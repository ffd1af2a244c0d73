interface Waiter<V> {
  resolve(value: V[]): void;
  reject(error: unknown): void;
}

/**
 * Reads by key, every key asked for in one turn of the event loop in one query. A fleet coming
 * back after a restart asks for thousands of hosts' rows within seconds, a few dozen in each turn:
 * one statement for all of them instead of one each (its round through Kysely, the driver and the
 * database), as the ingest batches webhooks. Nobody waits longer than the turn. `read` gets each
 * key once, at most `maxKeys` at a time, and answers the rows found, each under its key; a key
 * with none resolves to [].
 */
export class TurnLoader<K, V> {
  private pending = new Map<K, Array<Waiter<V>>>();

  constructor(
    private readonly read: (keys: K[]) => Promise<Array<[K, V]>>,
    private readonly maxKeys = 500,
  ) {}

  load(key: K): Promise<V[]> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    for (let at = 0; at < keys.length; at += this.maxKeys) void this.answer(keys.slice(at, at + this.maxKeys), batch);
  }

  private async answer(keys: K[], batch: Map<K, Array<Waiter<V>>>): Promise<void> {
    try {
      const found = new Map<K, V[]>();
      for (const [key, value] of await this.read(keys)) {
        const values = found.get(key);
        if (values) values.push(value);
        else found.set(key, [value]);
      }
      for (const key of keys) for (const waiter of batch.get(key) ?? []) waiter.resolve(found.get(key) ?? []);
    } catch (error) {
      for (const key of keys) for (const waiter of batch.get(key) ?? []) waiter.reject(error);
    }
  }
}

/**
 * One call of `run` for all callers of one turn of the event loop: the first caller starts it, the
 * others of the turn wait for the same promise; a caller of a later turn starts another.
 */
export function sharedWithinTurn<T>(run: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  return () => {
    if (!current) {
      current = run();
      setImmediate(() => {
        current = undefined;
      });
    }
    return current;
  };
}
