import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PitcrewError } from '../errors/catalogue.js';
import { firstJsonErrorAt } from './json-error-position.js';

type Parsed = (error: Error | null, body?: unknown) => void;

/**
 * How deep objects and arrays may nest in a body. The parser takes any depth, but what handles the
 * value afterwards recurses (JSON.stringify storing the payload overflowed the stack at a few
 * thousand levels, inside the group commit every call of the batch shared). Monitoring tools send
 * four or five levels; 64 leaves room for any real payload.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Fastify's JSON parser (secure-json-parse: `__proto__` refused), whose refusal says where the
 * text went wrong. Fastify's own says only "Body is not valid JSON", and a webhook template in a
 * monitoring tool that leaves a trailing comma or an unescaped quote is the usual cause of a 400.
 * `optional`: an empty body is no body rather than an error (the webhook's, DESIGN.md §3).
 */
export function jsonBodyParser(app: FastifyInstance, { optional = false, refuseNul = false } = {}) {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (request: FastifyRequest, body: string | Buffer, done: Parsed): void => {
    const text = String(body);
    if (optional && text.trim() === '') return done(null, undefined);
    parse(request, text, (error, value) => {
      if (error) return done(malformed(text));
      // Each level takes two characters at least: a short body cannot be too deep, and is not walked.
      if (text.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(value, MAX_JSON_DEPTH)) return done(tooDeep());
      // JSON can only carry a NUL escaped: a body without the escape holds none, and is not walked.
      const nul = refuseNul && text.includes('\\u0000') ? nulAt(value) : undefined;
      if (nul !== undefined) return done(nulRefused(nul));
      return done(null, value);
    });
  };
}

/** Whether objects and arrays nest deeper than `max` levels; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(next.value)) if (typeof child === 'object' && child !== null) stack.push({ value: child, depth });
  }
  return false;
}

/** The JSON pointer of the first string (or key) holding a NUL character, if any. */
export function nulAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (key.includes('\0')) return at;
    const found = nulAt(child, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

function nulRefused(path: string): PitcrewError {
  const message = 'contains a NUL character (\\u0000), which pitcrew cannot store; remove it';
  return new PitcrewError('PITCREW_ERR_VALIDATION', `/body${path}: ${message}`, { fieldErrors: [{ path: `/body${path}`, message }] });
}

function tooDeep(): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `the body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep, which is refused; send a flatter body (MetaData takes key/value pairs)`, {
    fieldErrors: [{ path: '/body', message: `nested more than ${MAX_JSON_DEPTH} levels deep` }],
  });
}

function malformed(text: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_MALFORMED_JSON', `the body is not valid JSON: ${describeJsonError(text)}`);
}

/**
 * What is wrong with a JSON text, and where (line and column, from 1), in words that quote none of
 * the text: the body may carry values nobody should find again in a reply or a log. V8 gives a
 * position for most mistakes, but not for an unexpected token ("Unexpected token 'u', \"...\" is
 * not valid JSON") nor the end of the text, which a hand-written template spanning lines often
 * hits: there the place is found by reading the text again (firstJsonErrorAt).
 */
export function describeJsonError(text: string): string {
  if (text.trim() === '') return 'the body is empty; send a JSON object';
  try {
    JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message
      .replace(/,\s*(?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
      .replace(/\s*\(line \d+ column \d+\)$/, '');
    const position = /\bat position (\d+)/.exec(message);
    const what = message
      .replace(/\s*in JSON at position \d+|\s*at position \d+/, '')
      .replace(/^(Unexpected token ')(.*)'$/s, (_, start: string, token: string) => `${start}${JSON.stringify(token).slice(1, -1)}'`);
    const at = position ? Number(position[1]) : firstJsonErrorAt(text);
    return at < 0 ? lowerFirst(what) : `${lowerFirst(what)} at ${lineAndColumn(text, at)}`;
  }
  return 'it has a "__proto__" or "constructor.prototype" key, which is refused; rename the key';
}

function lineAndColumn(text: string, index: number): string {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return `line ${line}, column ${index - before.lastIndexOf('\n')}`;
}

function lowerFirst(words: string): string {
  return words.charAt(0).toLowerCase() + words.slice(1);
}
