/**
 * How a management route is audited, declared in its schema (and so in the OpenAPI document) when
 * the name derived from its method and URL reads badly, or when a call changes nothing.
 */
export const AUDIT_KEYWORD = 'x-pitcrew-audit';

/**
 * Where an entry's target id comes from when the URL names none: the reply's `id`, or the caller's
 * own session or user (a sign-in, a sign-out).
 */
export type TargetSource = 'reply' | 'session' | 'user';

export type AuditDeclaration =
  | { action: string; target?: TargetSource }
  | { skip: string };

/** `schema: { ...audited('runbook.install', 'reply') }`: the action's name, and where its target's id comes from. */
export function audited(action: string, target?: TargetSource): { [AUDIT_KEYWORD]: AuditDeclaration } {
  return { [AUDIT_KEYWORD]: target ? { action, target } : { action } };
}

/** `schema: { ...notAudited('a preview: changes nothing') }`: a call that changes nothing, and why. */
export function notAudited(reason: string): { [AUDIT_KEYWORD]: AuditDeclaration } {
  return { [AUDIT_KEYWORD]: { skip: reason } };
}

export interface AuditSpec {
  action: string;
  targetType: string;
  /** The route parameter naming the target; else `from` says where its id is (the reply's `id` unless declared). */
  target: { param: string } | { from: TargetSource };
  /**
   * Whether the call acts on something that exists, whose view before is kept: what the URL names
   * for a PATCH, PUT or DELETE; the item a POST of a verb names (`POST /api-keys/:id/revoke`).
   */
  keepsBefore: boolean;
}

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/**
 * The action of a call from its method and route: `<targetType>.<verb>`. The first segment after
 * the API prefix names the type (singular, snake_case: `api-keys` → `api_key`); a segment after the
 * target's parameter names the verb (`/rules/:id/run` → `rule.run`), else the method does
 * (`POST /rules` → `rule.create`, `PATCH /rules/:id` → `rule.update`).
 */
export function auditSpec(method: string, routeUrl: string, declared: AuditDeclaration | undefined): AuditSpec | undefined {
  if (declared && 'skip' in declared) return undefined;
  const segments = routeUrl.replace(/^\/api\/v\d+/, '').split('/').filter(Boolean);
  const [collection = '', ...rest] = segments;
  const param = rest[0]?.startsWith(':') ? rest[0].slice(1) : undefined;
  const words = rest.filter((segment) => !segment.startsWith(':')).map(snake);
  const targetType = singular(snake(collection));
  const derived = `${targetType}.${words.length > 0 ? words.join('_') : (VERBS[method] ?? method.toLowerCase())}`;
  const action = declared?.action ?? derived;
  const target: AuditSpec['target'] = declared?.target ? { from: declared.target } : param ? { param } : { from: 'reply' };
  return {
    action,
    targetType: action.slice(0, action.indexOf('.')),
    target,
    keepsBefore: method !== 'POST' || 'param' in target,
  };
}

function snake(segment: string): string {
  return segment.replace(/-/g, '_');
}

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}
