import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export interface ProblemBody {
  status: number;
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Asserts an RFC 9457 reply with this status and code, whose detail says something a person can act on. */
export function expectProblem(response: LightMyRequestResponse, status: number, code: string): ProblemBody {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json() as ProblemBody;
  expect(problem).toMatchObject({ status, code });
  expect(problem.detail.length).toBeGreaterThan(20);
  return problem;
}
