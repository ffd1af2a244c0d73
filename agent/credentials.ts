import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** The agent's own identity after enrolment; the API key is never written to disk. */
export interface Credentials {
  hostId: string;
  tenantId: string;
  /** The per-agent credential (pca_…), sent as a bearer token on every connection. */
  token: string;
  /** The server it was issued by: credentials never travel to another one. */
  server: string;
  fingerprint?: string;
}

export class CredentialStore {
  readonly path: string;

  constructor(stateDir: string) {
    this.path = join(stateDir, 'credentials.json');
  }

  /** The saved credentials if they were issued by `server`. */
  async load(server: string): Promise<Credentials | undefined> {
    const text = await readFile(this.path, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      const saved = JSON.parse(text) as Partial<Credentials>;
      const valid = typeof saved.hostId === 'string' && typeof saved.tenantId === 'string' && typeof saved.token === 'string' && saved.token !== '';
      return valid && saved.server === server ? (saved as Credentials) : undefined;
    } catch {
      return undefined;
    }
  }

  async save(credentials: Credentials): Promise<void> {
    const temporary = `${this.path}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, this.path);
  }

  async clear(): Promise<void> {
    await rm(this.path, { force: true });
  }
}
