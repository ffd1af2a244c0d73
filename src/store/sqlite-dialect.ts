import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { BatchCapable } from './batch.js';

export interface WorkerSqliteOptions {
  file: string;
  busyTimeoutMs: number;
}

interface Outcome {
  rows?: unknown[];
  changes?: number;
  lastInsertRowid?: number;
}

interface Reply extends Outcome {
  id?: number;
  ready?: boolean;
  results?: Outcome[];
  error?: { message: string; code?: string };
}

/**
 * Kysely over better-sqlite3 running on a worker thread. Measured reason: with the connection
 * on the main thread, statement execution and the commit's disk sync took ~2 ms per group commit
 * during which no request was read (15 % of all CPU samples at saturation, bench/README.md).
 */
export class WorkerSqliteDialect implements Dialect {
  constructor(private readonly options: WorkerSqliteOptions) {}

  createAdapter() {
    return new SqliteAdapter();
  }

  createDriver(): Driver {
    return new WorkerSqliteDriver(this.options);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
}

class WorkerSqliteDriver implements Driver {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve(reply: Reply): void; reject(error: Error): void }>();
  private nextId = 0;
  private failure: Error | undefined;
  // SQLite has one connection: a transaction holds it until it commits, like Kysely's own driver.
  private lock: Promise<void> = Promise.resolve();
  private unlock: (() => void) | undefined;

  constructor(private readonly options: WorkerSqliteOptions) {}

  async init(): Promise<void> {
    const worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData: this.options });
    this.worker = worker;
    await new Promise<void>((resolve, reject) => {
      const onMessage = (reply: Reply) => {
        if (!reply.ready) return;
        worker.off('message', onMessage);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the SQLite worker exited (code ${code})`)));
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.lock;
    let release!: () => void;
    this.lock = new Promise((resolve) => (release = resolve));
    await previous;
    this.unlock = release;
    const connection: DatabaseConnection & BatchCapable = {
      executeQuery: (query) => this.execute(query),
      streamQuery: () => unsupported('streaming'),
      executeBatch: async (batch) => {
        const reply = await this.request({ batch: batch.queries.map((q) => ({ sql: q.sql, params: q.parameters })) });
        return reply.results!.map(toQueryResult);
      },
    };
    return connection;
  }

  async releaseConnection(): Promise<void> {
    this.unlock?.();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    if (!this.worker || this.failure) return;
    const worker = this.worker;
    await this.request({ close: true });
    this.failure = new Error('the database is closed');
    await worker.terminate();
  }

  private async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return toQueryResult(await this.request({ sql: query.sql, params: query.parameters })) as QueryResult<R>;
  }

  private request(message: Record<string, unknown>): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ id, ...message });
    });
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply.id!);
    if (!waiter) return;
    this.pending.delete(reply.id!);
    if (!reply.error) return waiter.resolve(reply);
    // Keep SQLite's error code (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, ...): callers branch on it.
    waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

function toQueryResult(outcome: Outcome): QueryResult<unknown> {
  if (outcome.rows) return { rows: outcome.rows };
  return { numAffectedRows: BigInt(outcome.changes ?? 0), insertId: BigInt(outcome.lastInsertRowid ?? 0), rows: [] };
}

function unsupported(what: string): never {
  throw new Error(`${what} is not supported by the SQLite worker dialect`);
}
