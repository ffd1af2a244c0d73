import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PitcrewError } from '../errors/catalogue.js';

type Parsed = (error: Error | null, body?: unknown) => void;

/**
 * Fastify's JSON parser (secure-json-parse: `__proto__` refused), whose refusal says where the
 * text went wrong. Fastify's own says only "Body is not valid JSON", and a webhook template in a
 * monitoring tool that leaves a trailing comma or an unescaped quote is the usual cause of a 400.
 * `optional`: an empty body is no body rather than an error (the webhook's, DESIGN.md §3).
 */
export function jsonBodyParser(app: FastifyInstance, { optional = false } = {}) {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (request: FastifyRequest, body: string | Buffer, done: Parsed): void => {
    const text = String(body);
    if (optional && text.trim() === '') return done(null, undefined);
    parse(request, text, (error, value) => (error ? done(malformed(text)) : done(null, value)));
  };
}

function malformed(text: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_MALFORMED_JSON', `the body is not valid JSON: ${describeJsonError(text)}`);
}

/**
 * What is wrong with a JSON text, and where (line and column, from 1), in words that quote none of
 * the text: the body may carry values nobody should find again in a reply or a log.
 */
export function describeJsonError(text: string): string {
  if (text.trim() === '') return 'the body is empty; send a JSON object';
  try {
    JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message
      .replace(/,\s*".*" is not valid JSON$/s, '')
      .replace(/\s*\(line \d+ column \d+\)$/, '');
    const position = /\bat position (\d+)/.exec(message);
    const what = message.replace(/\s*in JSON at position \d+|\s*at position \d+/, '');
    return position ? `${lowerFirst(what)} at ${lineAndColumn(text, Number(position[1]))}` : lowerFirst(what);
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
