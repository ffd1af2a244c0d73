import { describe, expect, it } from 'vitest';
import { PitcrewError } from '../errors/catalogue.js';
import type { ImportRequest } from './observation.js';
import { callJson, readCursor, windowEnd, writeCursor } from './tool-api.js';

function request(answer: () => Promise<Response>): ImportRequest {
  return { config: {}, secret: 's3cr3t-token', cursor: null, since: 0, now: 0, fetch: answer, signal: AbortSignal.timeout(5000) };
}

const call = { tool: 'Tool', call: 'GET /things', url: 'https://tool.example/api/things?x=1', init: { method: 'GET' as const, headers: {} }, hints: { 401: 'check the key' } };

describe('callJson', () => {
  it('gives the JSON of a 2xx answer', async () => {
    expect(await callJson(request(async () => new Response('{"a":1}')), call, [])).toEqual({ a: 1 });
  });

  it('says what the tool answered, with the hint for its status, and blots out the secret it echoes', async () => {
    const error = await callJson(request(async () => new Response('{"errors":["bad token s3cr3t-token"]}', { status: 401 })), call, ['s3cr3t-token']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PitcrewError);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect((error as PitcrewError).message).toBe('Tool refused GET /things: HTTP 401: bad token [REDACTED]; check the key');
  });

  it('a 2xx answer that is not JSON is a refusal that asks whether the URL is the API', async () => {
    const error = await callJson(request(async () => new Response('<html>login</html>')), call, []).catch((e: unknown) => e);
    expect((error as Error).message).toBe('Tool refused GET /things: HTTP 200 with a body that is not JSON (<html>login</html>): is the URL the tool\'s API?');
  });

  it('no answer is the tool unavailable, named with its address but not its query', async () => {
    const error = await callJson(request(async () => Promise.reject(new Error('getaddrinfo ENOTFOUND tool.example'))), call, []).catch((e: unknown) => e);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect((error as Error).message).toBe('Tool did not answer GET /things at https://tool.example/api/things: getaddrinfo ENOTFOUND tool.example');
  });
});

describe('cursors', () => {
  const valid = (state: Record<string, unknown>): state is Record<string, unknown> & { at: number } => typeof state.at === 'number';

  it('reads back what it wrote, and refuses a cursor it did not write rather than import again', () => {
    expect(readCursor('Tool', writeCursor({ at: 5 }), valid)).toMatchObject({ at: 5 });
    expect(readCursor('Tool', null, valid)).toBeNull();
    for (const cursor of ['', 'not json', '{"v":2,"at":5}', '{"v":1,"at":"5"}']) {
      expect(() => readCursor('Tool', cursor, valid)).toThrow(expect.objectContaining({ code: 'PITCREW_ERR_BAD_CURSOR' }));
    }
  });

  it('a window ends a minute before now, never before it starts', () => {
    expect(windowEnd(0, 3_600_000)).toBe(3_540_000);
    expect(windowEnd(3_590_000, 3_600_000)).toBe(3_590_000);
  });
});
