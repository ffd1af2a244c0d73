import { describe, expect, it } from 'vitest';
import { PitcrewError } from '../errors/catalogue.js';
import type { ImportRequest } from './observation.js';
import { callJson, readCursor, ToolImportError, windowEnd, writeCursor } from './tool-api.js';

function request(answer: () => Promise<Response>): ImportRequest {
  return { config: {}, secret: 's3cr3t-token', cursor: null, since: 0, now: 0, fetch: answer, signal: AbortSignal.timeout(5000) };
}

const call = { tool: 'Tool', url: 'https://user:pw@tool.example/api/things?api_key=k3y-in-query&x=1', hints: { 401: 'check the key' }, secrets: ['s3cr3t-token'] };

describe('callJson', () => {
  it('gives the JSON of a 2xx answer, sent through the import’s fetch as asked', async () => {
    const sent: Array<[string, string]> = [];
    const answer = async (url: string, init: { method: string; headers: Record<string, string> }) => {
      sent.push([init.method, `${url} ${init.headers.accept}`]);
      return new Response('{"a":1}');
    };
    expect(await callJson({ fetch: answer, signal: AbortSignal.timeout(5000) }, call)).toEqual({ a: 1 });
    expect(sent).toEqual([['GET', `${call.url} application/json`]]);
  });

  it('says what the tool answered, with the tool’s hint for its status, the URL without user info or query, and no secret it echoes', async () => {
    const error = await callJson(request(async () => new Response('{"errors":["bad token s3cr3t-token"]}', { status: 401 })), call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolImportError);
    expect(error).toBeInstanceOf(PitcrewError);
    expect(error).toMatchObject({ code: 'PITCREW_ERR_TOOL_REFUSED', toolStatus: 401 });
    expect((error as Error).message).toBe('Tool refused GET https://tool.example/api/things: HTTP 401: bad token [REDACTED]; check the key');
  });

  it('without a hint of the tool’s own, says what to check for the status; names an operation where the URL does not', async () => {
    const error = await callJson(request(async () => new Response('{"error":{"message":"not allowed"}}', { status: 403 })), { tool: 'Zabbix', url: 'https://z.example/api_jsonrpc.php', method: 'POST', operation: 'event.get' }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('Zabbix refused event.get at https://z.example/api_jsonrpc.php: HTTP 403: not allowed; the credential lacks a read permission this import needs (docs/incidents-import.md)');
  });

  it('a 2xx answer that is not JSON is a refusal that asks whether the address is the API', async () => {
    const error = await callJson(request(async () => new Response('<html>login</html>')), call).catch((e: unknown) => e);
    expect((error as Error).message).toBe('Tool refused GET https://tool.example/api/things: HTTP 200 with a body that is not JSON (<html>login</html>): is the address the tool\'s API?');
  });

  it('no answer, or none in time, is the tool unavailable; an abort of the import itself passes as it is', async () => {
    const error = await callJson(request(async () => Promise.reject(new Error('getaddrinfo ENOTFOUND tool.example'))), call).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PITCREW_ERR_TOOL_UNAVAILABLE', toolStatus: undefined });
    expect((error as Error).message).toBe('Tool did not answer GET https://tool.example/api/things: getaddrinfo ENOTFOUND tool.example; check the address and that pitcrew can reach it');
    const late = await callJson(request(async () => Promise.reject(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))), call).catch((e: unknown) => e);
    expect((late as Error).message).toBe('Tool did not answer GET https://tool.example/api/things: no answer in time; check the address and that pitcrew can reach it');
    const stop = new AbortController();
    stop.abort(new Error('stopping'));
    const stopped = await callJson({ fetch: async () => Promise.reject(new Error('aborted')), signal: stop.signal }, call).catch((e: unknown) => e);
    expect(stopped).not.toBeInstanceOf(ToolImportError);
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
