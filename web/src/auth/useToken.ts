import { useSyncExternalStore } from 'react';
import { currentToken, subscribeToSession } from './session';

export function useToken(): string | null {
  return useSyncExternalStore(subscribeToSession, currentToken);
}
