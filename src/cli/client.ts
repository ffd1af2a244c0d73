import fs from 'node:fs';
import type { ClientConfig } from '../config/config.js';

/** A refusal the CLI prints as is: the service's problem detail, or what to do locally. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/** A command given no subcommand, or one it does not know: usage error (exit code 2), with its usage. */
export function unknownSubcommand(verb: string | undefined, usage: string): CliError {
  return new CliError(`${verb === undefined ? 'a subcommand is needed' : `unknown subcommand "${verb}"`}\n\n${usage}`, 2);
}

/** The options every API command takes: where the service is, the token, and whether to print JSON. */
export interface ApiOptions {
  server?: string | undefined;
  token?: string | undefined;
  json?: boolean | undefined;
}

/**
 * An API command's client (its options over the environment's) and how it prints an answer: the
 * API's JSON with --json, else its words.
 */
export function apiCommand(values: ApiOptions, env: ClientConfig, out: (line: string) => void): { client: ClientConfig; show: (value: unknown, text: string) => void } {
  const client: ClientConfig = { server: (values.server ?? env.server).replace(/\/$/, ''), token: values.token ?? env.token };
  const show = (value: unknown, text: string) => out(values.json ? JSON.stringify(value, null, 2) : text);
  return { client, show };
}

/** Calls the management API with the token, turning problem+json replies into a CliError. */
export async function callApi(client: ClientConfig, method: string, path: string, body?: unknown): Promise<unknown> {
  if (!client.token) throw new CliError('no management token: pass --token or set PITCREW_TOKEN (npx pitcrew bootstrap --json prints one)', 2);
  let response: Response;
  try {
    response = await fetch(`${client.server}${path}`, {
      method,
      headers: { authorization: `Bearer ${client.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new CliError(`cannot reach ${client.server} (${reason}); is pitcrew server running there? (--server or PITCREW_SERVER)`);
  }
  if (response.status === 204) return undefined;
  const text = await response.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  if (!response.ok) {
    const fields = (json?.errors as Array<{ path: string; message: string }> | undefined)?.map((e) => `\n  ${e.path}: ${e.message}`).join('') ?? '';
    throw new CliError(`${String(json?.detail ?? `${response.status} ${response.statusText}`)} (${String(json?.code ?? response.status)})${fields}`);
  }
  return json;
}

/**
 * Every item of a paged list of the API (`{items, nextCursor}`), read a page of 1000 (the most a
 * page holds) at a time, following nextCursor to the end: a command that lists shows all.
 */
export async function callApiAll<T>(client: ClientConfig, path: string): Promise<{ items: T[]; nextCursor: null }> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const query = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = (await callApi(client, 'GET', `${path}${path.includes('?') ? '&' : '?'}${query}`)) as { items: T[]; nextCursor: string | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return { items, nextCursor: null };
}

/** A JSON option's value: inline, `@FILE`, or `-` for stdin (which keeps secrets out of the process list). */
export function readJsonOption(flag: string, value: string): unknown {
  const text = value === '-' ? fs.readFileSync(0, 'utf8') : value.startsWith('@') ? fs.readFileSync(value.slice(1), 'utf8') : value;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} is not valid JSON: ${(error as Error).message}`, 2);
  }
}
