import fs from 'node:fs';
import path from 'node:path';
import { PitcrewError } from '../../errors/catalogue.js';
import { scriptSha256 } from '../repository.js';
import { STARTER_RUNBOOKS, type StarterRunbook } from './catalogue.js';

/** A library runbook, whole: what installing it saves. */
export interface LibraryEntry extends StarterRunbook {
  description: string;
  script: string;
  /** Hex SHA-256 of the script, as the runbook store computes it once installed. */
  sha256: string;
}

/** The runbooks shipped with pitcrew, read once when the service starts. */
export class RunbookLibrary {
  private readonly bySlug: Map<string, LibraryEntry>;

  constructor(readonly entries: readonly LibraryEntry[]) {
    this.bySlug = new Map(entries.map((entry) => [entry.slug, entry]));
  }

  /** Reads every runbook of the catalogue from `dir`; a missing file stops the start, naming it. */
  static load(dir: string, catalogue: readonly StarterRunbook[] = STARTER_RUNBOOKS): RunbookLibrary {
    return new RunbookLibrary(catalogue.map((runbook) => {
      const read = (extension: string) => {
        const file = path.join(dir, `${runbook.slug}${extension}`);
        try {
          return fs.readFileSync(file, 'utf8');
        } catch (error) {
          throw new Error(`the starter runbook library is incomplete: cannot read ${file} (${(error as NodeJS.ErrnoException).code}); reinstall pitcrew`, { cause: error });
        }
      };
      const script = read('.sh');
      return { ...runbook, description: read('.md'), script, sha256: scriptSha256(script) };
    }));
  }

  /** The entry of `slug`, or a 404 that lists the slugs there are. */
  get(slug: string): LibraryEntry {
    const entry = this.bySlug.get(slug);
    if (entry) return entry;
    const known = this.entries.map((e) => e.slug).join(', ');
    throw new PitcrewError('PITCREW_ERR_NOT_FOUND', `the runbook library has no "${slug}"; it has: ${known}`, {
      fieldErrors: [{ path: '/params/slug', message: `not in the library; one of: ${known}` }],
    });
  }
}
