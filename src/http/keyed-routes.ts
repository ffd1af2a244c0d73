import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The routes whose path carries a secret, read from the route table as routes are added. */
    keyedRoutes: KeyedRoutes;
  }
}

export const REDACTED = '[REDACTED]';

/** A path parameter holding a secret: `:apiKey` today, and any `…key`, `…token`, `…secret` or `…password` added later. */
const SECRET_PARAM = /(?:key|token|secret|password)$/i;

/**
 * A run of 16 or more hexadecimal digits: an API key is 64 (identity/secrets.ts), a management
 * token 64 after `pct_`; ids are UUIDs, whose longest run is 12. It catches a key in a URL no keyed
 * route describes (the older webhook form with a tool's name, a mistyped prefix, a query string),
 * and most of one with a typo in it.
 */
const KEY_SHAPED = /[0-9a-f]{16,}/gi;

interface KeyedRoute {
  /** Each path segment's static text, lower case; undefined for a segment holding a parameter. */
  segments: (string | undefined)[];
  /** Where the segments holding a secret are. */
  secrets: number[];
}

/**
 * Which paths carry a secret, and in which segment (DESIGN.md §3: the tenant API key travels in
 * trigger URLs). Fed by the app's onRoute hook, so a route added later with a key in its path is
 * redacted without anyone listing it.
 */
export class KeyedRoutes {
  private readonly routes: KeyedRoute[] = [];
  private readonly known = new Set<string>();

  /** The keyed route paths, as registered. */
  get paths(): string[] {
    return [...this.known];
  }

  add(path: string): void {
    if (this.known.has(path)) return;
    const segments = path.split('/').filter(Boolean);
    const secrets = segments.flatMap((segment, i) => (paramNames(segment).some((name) => SECRET_PARAM.test(name)) ? [i] : []));
    if (secrets.length === 0) return;
    this.known.add(path);
    this.routes.push({ segments: segments.map((segment) => (/[:*]/.test(segment) ? undefined : segment.toLowerCase())), secrets });
  }

  /**
   * The URL with the secret segment of every keyed route it fits replaced. A URL fits a route when
   * its segments up to the secret match the route's, whatever follows (a 404 for an extra or a
   * missing segment still hides the key); empty segments (`//`) are skipped as people type them.
   */
  redact(url: string): string {
    const cut = url.search(/[?#]/);
    const parts = (cut < 0 ? url : url.slice(0, cut)).split('/');
    const filled = parts.flatMap((part, i) => (part ? [i] : []));
    const hidden = new Set<number>();
    for (const route of this.routes) {
      const last = route.secrets.at(-1)!;
      if (filled.length <= last) continue;
      const fits = route.segments.slice(0, last + 1).every((segment, j) => segment === undefined || sameSegment(segment, parts[filled[j]!]!));
      if (fits) for (const j of route.secrets) hidden.add(filled[j]!);
    }
    const path = parts.map((part, i) => (hidden.has(i) ? REDACTED : part)).join('/');
    return hideKeyShaped(path + (cut < 0 ? '' : url.slice(cut)));
  }
}

/** Records every route with a secret in its path: called on the root instance before any route is added. */
export function trackKeyedRoutes(server: FastifyInstance): KeyedRoutes {
  const routes = new KeyedRoutes();
  server.decorate('keyedRoutes', routes);
  server.addHook('onRoute', (route) => routes.add(route.url));
  return routes;
}

/** The request's URL as it may be logged or echoed in a reply: no secret of a keyed route, nothing shaped like a key. */
export function redactedUrl(request: FastifyRequest): string {
  // A server without the hook (the metrics listener) has no keyed routes.
  const routes = (request.server as Partial<FastifyInstance>).keyedRoutes;
  return routes ? routes.redact(request.url) : hideKeyShaped(request.url);
}

function hideKeyShaped(text: string): string {
  return text.replace(KEY_SHAPED, REDACTED);
}

/** The parameter names of one segment of a find-my-way path (`:apiKey`, `:a-:b`, `:id(^\\d+)`); `::` is a literal colon. */
function paramNames(segment: string): string[] {
  return [...segment.replaceAll('::', '').matchAll(/:([\w$]+)/g)].map((match) => match[1]!);
}

function sameSegment(expected: string, actual: string): boolean {
  let decoded = actual;
  try {
    decoded = decodeURIComponent(actual);
  } catch {
    // A malformed escape is compared as sent.
  }
  return decoded.toLowerCase() === expected;
}
