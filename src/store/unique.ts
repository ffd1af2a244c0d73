import { PitcrewError } from '../errors/catalogue.js';

/** Whether a write failed on a unique index, on PostgreSQL (23505) or SQLite. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Runs a write; a unique-name violation becomes a 409 that names what to change. */
export async function withUniqueName<T>(what: string, name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(what, name);
    throw error;
  }
}

/** The 409 for a name another of the tenant's records already has. */
export function nameTaken(what: string, name: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_CONFLICT', `a ${what} named "${name.trim()}" already exists in this tenant; choose another name`, {
    fieldErrors: [{ path: '/body/name', message: `already used by another ${what}` }],
  });
}
