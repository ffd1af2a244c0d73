import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { roleAtLeast, type Role } from '../identity/roles.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { baseUrl, type Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import type { Durability } from '../store/durability.js';
import { activityOf, activityOfRule, NO_ACTIVITY, type RuleActivity } from './activity.js';
import { presentRule } from './presenter.js';
import { createRule, deleteRule, getRule, listRules, replaceRule, ruleToInput, type RuleWritten } from './repository.js';
import { spellInfrastructureType, withInfrastructureType } from './infrastructure.js';
import { RuleBody, RulePatch, RuleView, type RuleInput } from './schema.js';
import { previewSchedule, SchedulePreviewInput, SchedulePreviewView } from './schedule-preview.js';
import { crossFieldErrors, providerOf, scheduleErrors, type CheckOptions } from './validate.js';
import { notAudited } from '../identity/audit/naming.js';
import { recordInChange } from '../identity/audit/recorder.js';
import type { Rule } from './rule.js';

/** A rule and its activity, as read for its view. */
interface LoadedRule {
  rule: Rule;
  activity: RuleActivity;
}

const tags = ['rules'];

/** publicUrl: PITCREW_PUBLIC_URL, the base of each rule's webhook URL when set; onCreated: what else a new rule's transaction does. */
export function registerRuleRoutes(app: Api, { db, durability, publicUrl, clock = Date.now, onCreated }: { db: Kysely<Database>; durability: Durability; publicUrl: string | undefined; clock?: () => number; onCreated?: RuleWritten }): void {
  const load = async (request: FastifyRequest): Promise<LoadedRule> => {
    const rule = await getRule(db, request.principal.tenantId, (request.params as { id: string }).id);
    return { rule, activity: await activityOfRule(db, rule.tenantId, rule.id) };
  };
  const present = (request: FastifyRequest, { rule, activity }: LoadedRule) => presentRule(rule, baseUrl(publicUrl, request), activity);
  /** The rule as GET /rules/:id shows it. */
  const viewOf = async (request: FastifyRequest): Promise<RuleView> => present(request, await load(request));
  /** What the audit log reads before a change, the GET's view; kept for the handler, which would read it again. */
  const loadedBefore = new WeakMap<FastifyRequest, LoadedRule>();
  const auditBefore = async (request: FastifyRequest): Promise<RuleView> => {
    const loaded = await load(request);
    loadedBefore.set(request, loaded);
    return present(request, loaded);
  };
  /**
   * A change's view, made in its transaction once the rule is written, and its audit entry written
   * there with that view (identity/audit/recorder.ts recordInChange). `known`: the activity still
   * true after the change unless the rule is cron (whose schedule moves with it), read otherwise.
   */
  const viewInChange = (request: FastifyRequest, known: RuleActivity | undefined) => {
    const written: { view?: RuleView } = {};
    const onWritten = async (tx: Transaction<Database>, rule: Rule) => {
      const activity = known && rule.trigger.type !== 'cron' ? known : await activityOfRule(tx, rule.tenantId, rule.id);
      written.view = presentRule(rule, baseUrl(publicUrl, request), activity);
      await recordInChange(request, db, tx, written.view);
    };
    return { written, onWritten };
  };

  app.post('/rules', {
    preValidation: spellInfrastructureType,
    schema: {
      tags, ...access('admin'), summary: 'Create a rule',
      description: 'An alert rule whose trigger names an alarm joins the rules (ruleIds) of that alarm\'s incidents on its integration (docs/incidents.md, "One-click automation").',
      body: RuleBody,
      response: { 201: RuleView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const input = withInfrastructureType(request.body);
    assertConsistent(input, { firesAfter: clock() });
    await assertIntegrationExists(db, request.principal.tenantId, input);
    await assertCredentialExists(db, request.principal.tenantId, input);
    // A cron rule's view lists its next ticks from its schedule, made with it.
    const { written, onWritten } = viewInChange(request, NO_ACTIVITY);
    const rule = await createRule(db, durability, request.principal.tenantId, input, clock(), async (tx, made) => {
      await onCreated?.(tx, made);
      await onWritten(tx, made);
    });
    return reply.code(201).header('Location', `/api/v1/rules/${rule.id}`).send(written.view!);
  });

  app.get('/rules', {
    schema: {
      tags, ...access('viewer'), summary: 'List rules (oldest first), each with its last event and last execution',
      querystring: Type.Object({
        ...PageQuery,
        enabled: Type.Optional(Type.Boolean()),
        triggerType: Type.Optional(Type.Enum(['webhook', 'alert', 'cron'])),
        search: Type.Optional(Type.String({ maxLength: 200, description: 'part of the name, any case' })),
      }, { additionalProperties: false }),
      response: { 200: pageOf(RuleView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const { enabled, triggerType, search } = request.query;
    const rules = await listRules(db, request.principal.tenantId, { enabled, triggerType, search }, page);
    const activity = await activityOf(db, request.principal.tenantId, rules.slice(0, page.limit).map((rule) => rule.id));
    return toPage(rules, page, (rule) => presentRule(rule, baseUrl(publicUrl, request), activity.get(rule.id)));
  });

  app.get('/rules/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get a rule', params: IdParams, response: { 200: RuleView, ...problems(400, 401, 404) } },
  }, viewOf);

  app.patch('/rules/:id', {
    preValidation: spellInfrastructureType,
    config: { auditBefore },
    schema: {
      tags, ...access('operator'),
      summary: 'Change a rule: the fields given replace the current ones (e.g. {"enabled": false} turns it off). An operator may only turn a rule on or off',
      params: IdParams, body: RulePatch, response: { 200: RuleView, ...problems(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    assertMayChange(request.principal.role, request.body);
    const before = loadedBefore.get(request) ?? await load(request);
    const current = before.rule;
    const merged = { ...ruleToInput(current), ...request.body };
    // A schedule stored before is not judged again for a change of something else.
    assertConsistent(merged, { firesAfter: request.body.trigger ? clock() : undefined });
    if (request.body.trigger) await assertIntegrationExists(db, request.principal.tenantId, merged);
    if (request.body.action) await assertCredentialExists(db, request.principal.tenantId, merged);
    // A change writes no event nor execution: only a cron rule's schedule moves with it.
    const { written, onWritten } = viewInChange(request, current.trigger.type !== 'cron' ? before.activity : undefined);
    await replaceRule(db, durability, current, merged, clock(), onWritten);
    return written.view!;
  });

  app.post('/schedules/preview', {
    schema: {
      ...notAudited('a preview: computes the next ticks, stores nothing'),
      tags, ...access('viewer'), summary: "A cron schedule's next ticks in its time zone, as the rule would fire them (the rule wizard shows them as you type); nothing is stored",
      body: SchedulePreviewInput, response: { 200: SchedulePreviewView, ...problems(400, 401) },
    },
  }, async (request) => {
    const errors = scheduleErrors(request.body, clock());
    if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
    return previewSchedule(request.body, clock());
  });

  app.delete('/rules/:id', {
    config: { auditBefore },
    schema: {
      tags, ...access('admin'), summary: 'Delete a rule (its webhook stops answering; recorded events stay)',
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    await deleteRule(db, durability, request.principal.tenantId, request.params.id, clock(), (tx) => recordInChange(request, db, tx, null));
    return reply.code(204).send(null);
  });
}

/** An alert trigger listens to one of the tenant's integrations: it must exist. */
async function assertIntegrationExists(db: Kysely<Database>, tenantId: string, input: RuleInput): Promise<void> {
  if (input.trigger.type !== 'alert') return;
  const { integrationId } = input.trigger;
  const found = await db.selectFrom('integrations').select('id').where('id', '=', integrationId).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).executeTakeFirst();
  if (found) return;
  const message = `no integration ${integrationId} in this tenant; create one with POST /api/v1/integrations, or pick one from GET /api/v1/integrations`;
  throw new PitcrewError('PITCREW_ERR_VALIDATION', `/body/trigger/integrationId: ${message}`, { fieldErrors: [{ path: '/body/trigger/integrationId', message }] });
}

/** A cloud or CLI action acts with the tenant's own credentials: each must exist (another tenant's does not, here). */
async function assertCredentialExists(db: Kysely<Database>, tenantId: string, input: RuleInput): Promise<void> {
  if (input.action.type === 'cli') return assertCliCredentials(db, tenantId, input.action.credentialIds ?? []);
  if (input.action.type !== 'cloud' || input.action.credentialId === undefined) return;
  const { credentialId } = input.action;
  const found = await db.selectFrom('credentials').select(['name', 'provider']).where('id', '=', credentialId).where('tenant_id', '=', tenantId).executeTakeFirst();
  const provider = input.action.provider ?? providerOf(input.infrastructureType);
  if (found && (provider === undefined || found.provider === provider)) return;
  const message = found
    ? `credential "${found.name}" is for ${found.provider}, and this action for ${provider}: pick one for ${provider}`
    : missingCredential(credentialId);
  throw credentialError('/body/action/credentialId', message);
}

/** A CLI runbook gets each credential in its CLI's variables: two of one provider would overwrite each other. */
async function assertCliCredentials(db: Kysely<Database>, tenantId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await db.selectFrom('credentials').select(['id', 'name', 'provider']).where('id', 'in', ids).where('tenant_id', '=', tenantId).execute();
  const seen = new Map<string, string>();
  for (const [i, id] of ids.entries()) {
    const credential = found.find((row) => row.id === id);
    if (!credential) throw credentialError(`/body/action/credentialIds/${i}`, missingCredential(id));
    const other = seen.get(credential.provider);
    if (other) throw credentialError(`/body/action/credentialIds/${i}`, `credentials "${other}" and "${credential.name}" are both for ${credential.provider}, whose CLI reads one set of variables: give one per provider`);
    seen.set(credential.provider, credential.name);
  }
}

function missingCredential(id: string): string {
  return `no credential ${id} in this tenant; store one with POST /api/v1/credentials, or pick one from GET /api/v1/credentials`;
}

function credentialError(path: string, message: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${path}: ${message}`, { fieldErrors: [{ path, message }] });
}

function assertConsistent(input: RuleBody, options: CheckOptions): asserts input is RuleInput {
  const errors = crossFieldErrors(input, options).map((e) => ({ ...e, path: `/body${e.path}` }));
  if (errors.length > 0) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}${more}`, { fieldErrors: errors });
  }
}

/** An operator toggles rules (issue 37); changing what a rule does is an admin's. */
function assertMayChange(role: Role, patch: object): void {
  const others = Object.keys(patch).filter((field) => field !== 'enabled');
  if (others.length > 0 && !roleAtLeast(role, 'admin')) {
    throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `an operator may only turn a rule on or off ({"enabled": true|false}); changing ${others.join(', ')} needs the admin role. Ask an admin or owner of the tenant`);
  }
}
