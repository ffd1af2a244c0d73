import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Page } from '../api/types';
import type { Role } from '../auth/roles';

export interface Member {
  id: string;
  email: string | null;
  role: Role;
  status: 'active' | 'invited' | 'disabled';
  /** Whether they have a second factor (never what it is). */
  totp: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

/** Whether the service e-mailed the link (through the tenant's e-mail channel), and if not why. */
export interface Emailed {
  sent: boolean;
  detail: string;
}

export type InvitedMember = Member & { inviteUrl: string; emailed?: Emailed };

const KEY = ['users'];

/** The tenant's members, oldest account first, 50 at a time (Load more for the rest). */
export function useMembers() {
  return useInfiniteQuery({
    queryKey: KEY,
    queryFn: ({ pageParam, signal }) => api<Page<Member>>('/users', { query: { cursor: pageParam, limit: 50 }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
}

export function useInvite() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (invite: { email: string; role: Role }) => api<InvitedMember>('/users', { method: 'POST', body: invite }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}

export function useChangeRole() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, role }: { id: string; role: Role }) => api<Member>(`/users/${id}`, { method: 'PATCH', body: { role } }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}

export function useRemoveMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/users/${id}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}

export function useResetLink() {
  return useMutation({
    mutationFn: (id: string) => api<{ resetUrl: string; emailed: Emailed }>(`/users/${id}/reset`, { method: 'POST' }),
  });
}

/** What removing a member's second factor did: their sessions ended, and whether they were told by e-mail. */
export type SecondFactorReset = Member & { sessionsEnded: number; emailed: Emailed };

export function useResetSecondFactor() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<SecondFactorReset>(`/users/${id}/totp`, { method: 'DELETE' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}
