import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { messageOf } from '../api/problem';
import { followEvents } from '../api/sse';
import type { Execution, ExecutionState } from '../api/types';
import { executionKey } from './queries';

export interface LiveOutput {
  stdout: string;
  stderr: string;
  /** The stream is open and delivering. */
  following: boolean;
  error: string | null;
}

/**
 * Follows a running execution's stream (GET /executions/{id}/stream): output as it is written,
 * state changes into the cached execution, and at the end the stored execution replaces it.
 * Mount it once per execution (key by id): its output belongs to that one run.
 */
export function useExecutionStream(id: string, active: boolean): LiveOutput {
  const queryClient = useQueryClient();
  const [live, setLive] = useState({ stdout: '', stderr: '', ended: false, error: null as string | null });
  useEffect(() => {
    if (!active) return;
    const controller = new AbortController();
    const patch = (change: Partial<Execution>) => queryClient.setQueryData(executionKey(id), (old: Execution | undefined) => (old ? { ...old, ...change } : old));
    let output = { stdout: '', stderr: '' };
    followEvents(`/executions/${id}/stream`, controller.signal, (event) => {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      if (event.event === 'output') {
        const stream = data.stream === 'stderr' ? 'stderr' : 'stdout';
        output = { ...output, [stream]: output[stream] + String(data.chunk) };
        setLive((current) => ({ ...current, ...output }));
      } else if (event.event === 'state') {
        patch({ state: data.state as ExecutionState });
      } else if (event.event === 'end') {
        patch(data as Partial<Execution>);
        // The end event carries the run; its transitions and artifacts come with the full read.
        void queryClient.invalidateQueries({ queryKey: executionKey(id) });
        void queryClient.invalidateQueries({ queryKey: ['executions', 'list'] });
      }
    })
      .then(() => setLive((current) => ({ ...current, ended: true })))
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setLive((current) => ({ ...current, ended: true, error: messageOf(error) }));
      });
    return () => controller.abort();
  }, [id, active, queryClient]);
  return { stdout: live.stdout, stderr: live.stderr, error: live.error, following: active && !live.ended };
}
