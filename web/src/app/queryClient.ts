import { QueryClient } from '@tanstack/react-query';
import { ApiProblem } from '../api/problem';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 2000,
        // A 4xx will not change on retry (bad id, refused token); a network blip or a 503 may.
        retry: (failures, error) => failures < 2 && !(error instanceof ApiProblem && error.status >= 400 && error.status < 500),
      },
    },
  });
}
