import type { ImportRequest } from '../observation.js';
import { callJson, toolRefused, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';

/*
 * Prometheus's HTTP API as the alertmanager integration reads it, for its import (import.ts) and
 * its graph snapshots (graph.ts): `GET /api/v1/query_range` answers {status, data:{resultType:
 * "matrix", result:[{metric, values:[[seconds, "value"]]}]}} (Prometheus HTTP API, "Range queries").
 */

export interface Series {
  metric: Record<string, string>;
  /** [epoch ms, value] */
  values: Array<[number, string]>;
}

export function prometheus(url: string, auth: Auth): ToolCall {
  return { tool: 'Prometheus', url, ...auth };
}

export async function matrix(request: Pick<ImportRequest, 'fetch' | 'signal'>, call: ToolCall): Promise<Series[]> {
  const answer = await callJson(request, call);
  const data = isRecord(answer) && answer.status === 'success' && isRecord(answer.data) ? answer.data : undefined;
  if (!data || data.resultType !== 'matrix' || !Array.isArray(data.result)) {
    throw toolRefused(call, `an answer without a range result (status "${isRecord(answer) ? String(answer.status) : typeof answer}"): is prometheusUrl Prometheus's address (port 9090 by default)?`);
  }
  return data.result.flatMap((item) => {
    if (!isRecord(item) || !isRecord(item.metric) || !Array.isArray(item.values)) return [];
    const values: Array<[number, string]> = [];
    for (const pair of item.values) {
      if (Array.isArray(pair) && typeof pair[0] === 'number') values.push([Math.round(pair[0] * 1000), String(pair[1])]);
    }
    return [{ metric: textLabels(item.metric), values: values.sort((a, b) => a[0] - b[0]) }];
  });
}

export function textLabels(value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) if (typeof v === 'string') out[name] = v;
  return out;
}

/** The headers a call sends and the secrets its messages blot out. */
export type Auth = Pick<ToolCall, 'headers' | 'secrets'>;

/** No secret: no header. A string: a bearer token. {username, password}: basic authentication (a proxy in front of the tool). */
export function authOf(secret: unknown): Auth {
  if (typeof secret === 'string') return { headers: { authorization: `Bearer ${secret}` }, secrets: [secret] };
  if (isRecord(secret) && typeof secret.username === 'string' && typeof secret.password === 'string') {
    const basic = Buffer.from(`${secret.username}:${secret.password}`).toString('base64');
    return { headers: { authorization: `Basic ${basic}` }, secrets: [secret.password, basic] };
  }
  return {};
}

export function urlRoot(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.replace(/\/+$/, '') : undefined;
}
