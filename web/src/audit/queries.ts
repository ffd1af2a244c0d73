import { apiUrl } from '../api/client';
import { useLivePages } from '../api/useLivePages';

export type AuditActor =
  | { type: 'user'; id: string; email: string | null }
  | { type: 'token' | 'api_key'; id: string; name: string }
  /** A refused single sign-on: nobody known, the e-mail the attempt claimed (unverified). */
  | { type: 'anonymous'; email: string | null };

export interface AuditEntry {
  id: string;
  at: string;
  actor: AuditActor;
  via: string;
  ip: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  before?: unknown;
  after?: unknown;
}

export interface AuditFilters {
  actor?: string;
  target?: string;
  action?: string;
  from?: string;
  to?: string;
}

/** The audit log, newest first, filtered (GET /api/v1/audit). */
export function useAuditLog(filters: AuditFilters, pageSize = 50) {
  return useLivePages<AuditEntry>(['audit', filters, pageSize], '/audit', { ...filters }, { pageSize, refetchMs: 15_000, keepPrevious: true });
}

/** Every entry the filters match, as JSON lines. */
export function exportUrl(filters: AuditFilters): string {
  return apiUrl('/audit/export', { ...filters });
}
