import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Channel, ChannelInput, ChannelMode, ChannelPatch, DeliveryAttempt, EscalationContacts, TestResult } from '../api/channel-types';
import type { Page } from '../api/types';

// Status, last delivery and attempts change while you look: the notifier delivers in the background.
const LIVE_MS = 5000;

export function useChannels() {
  return useQuery({
    queryKey: ['channels', 'list'],
    queryFn: ({ signal }) => api<Page<Channel>>('/channels', { query: { limit: 1000 }, signal }),
    refetchInterval: LIVE_MS,
  });
}

export function useChannel(id: string) {
  return useQuery({ queryKey: ['channels', 'one', id], queryFn: ({ signal }) => api<Channel>(`/channels/${id}`, { signal }), refetchInterval: LIVE_MS });
}

export function useChannelAttempts(id: string) {
  return useInfiniteQuery({
    queryKey: ['channels', 'attempts', id],
    queryFn: ({ pageParam, signal }) => api<Page<DeliveryAttempt>>(`/channels/${id}/attempts`, { query: { cursor: pageParam, limit: 25 }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: LIVE_MS,
  });
}

function useChannelMutation<Variables>(mutationFn: (variables: Variables) => Promise<Channel>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (channel) => {
      queryClient.setQueryData(['channels', 'one', channel.id], channel);
      return queryClient.invalidateQueries({ queryKey: ['channels'] });
    },
  });
}

export function useCreateChannel() {
  return useChannelMutation((input: ChannelInput) => api<Channel>('/channels', { method: 'POST', body: input }));
}

export function useUpdateChannel() {
  return useChannelMutation(({ id, patch }: { id: string; patch: ChannelPatch }) => api<Channel>(`/channels/${id}`, { method: 'PATCH', body: patch }));
}

export function useSetChannelMode() {
  return useChannelMutation(({ id, mode }: { id: string; mode: ChannelMode }) => api<Channel>(`/channels/${id}`, { method: 'PATCH', body: { mode } }));
}

/** Sends a test message now; a 502 carries the receiver's answer in its detail. */
export function useTestChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<TestResult>(`/channels/${id}/test`, { method: 'POST' }),
    // Delivered or not, the attempt is recorded and the channel's status may have changed.
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['channels'] }),
  });
}

export function useDeleteChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/channels/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['channels', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['channels'] });
    },
  });
}

export function useEscalationContacts() {
  return useQuery({ queryKey: ['escalation-contacts'], queryFn: ({ signal }) => api<EscalationContacts>('/escalation-contacts', { signal }) });
}

export function useSaveEscalationContacts() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (contacts: Omit<EscalationContacts, 'updatedAt'>) => api<EscalationContacts>('/escalation-contacts', { method: 'PUT', body: contacts }),
    onSuccess: (saved) => queryClient.setQueryData(['escalation-contacts'], saved),
  });
}
