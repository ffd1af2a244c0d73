import { createHash } from 'node:crypto';

/** A file name for an execution id: the id itself when it is plain (UUIDs are), else its hash. */
export function fileNameFor(executionId: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(executionId) ? executionId : `x${createHash('sha256').update(executionId).digest('hex').slice(0, 40)}`;
}
