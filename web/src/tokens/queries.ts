import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Page } from '../api/types';
import type { Role } from '../auth/roles';

export interface PersonalToken {
  id: string;
  name: string;
  userId: string | null;
  role: Role | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export type IssuedToken = PersonalToken & { token: string };

const KEY = ['tokens'];

/** Your tokens, newest first, 50 at a time (Load more for the rest). */
export function useTokens() {
  return useInfiniteQuery({
    queryKey: KEY,
    queryFn: ({ pageParam, signal }) => api<Page<PersonalToken>>('/tokens', { query: { cursor: pageParam, limit: 50 }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
}

export function useIssueToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (token: { name: string; role?: Role; expiresAt?: string }) => api<IssuedToken>('/tokens', { method: 'POST', body: token }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}

export function useRevokeToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/tokens/${id}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}
