import { curlPost } from '../http/curl.js';
import { approvalTerms } from './approval.js';
import { NO_ACTIVITY, type RuleActivity } from './activity.js';
import { MAX_DATE_MS, nextTicks, type CronTrigger } from './cron.js';
import { providerOf } from './validate.js';
import type { Rule } from './rule.js';
import { shownAction } from './runbook-refs.js';
import type { RuleView } from './schema.js';

export const API_KEY_PLACEHOLDER = '<api_key>';

export function webhookPath(apiKey: string, triggerId: string): string {
  return `/api/v1/trigger/channel/webhook/${apiKey}/${triggerId}`;
}

const SAMPLE = { HostName: 'web-1', AppName: 'shop', AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', Act: true, MetaData: { Key1: 'Value1' } };

/** The curl's body: a cloud action that reads its instance from the payload gets one to read. */
function sampleBody(rule: Rule): Record<string, unknown> {
  const { action } = rule;
  const instances = action.type === 'cloud' ? (action.instances ?? { from: 'payload' as const }) : undefined;
  if (action.type !== 'cloud' || !instances || !('from' in instances)) return SAMPLE;
  const openstack = (action.provider ?? providerOf(rule.infrastructureType)) === 'openstack';
  return { ...SAMPLE, [instances.field ?? 'InstanceId']: openstack ? '8d5b4a1e-2c3f-4e6a-9b7c-0d1e2f3a4b5c' : 'i-0123456789abcdef0' };
}

/**
 * The API view of a rule: whitelisted fields, times as ISO 8601, webhook URL and curl ready to
 * copy, and what last happened on it.
 */
export function presentRule(rule: Rule, baseUrl: string, activity: RuleActivity = NO_ACTIVITY): RuleView {
  const { lastEvent, lastExecution, schedule } = activity;
  return {
    id: rule.id,
    name: rule.name,
    enabled: rule.enabled,
    trigger: presentTrigger(rule, baseUrl),
    action: shownAction(rule.action),
    target: rule.target,
    infrastructureType: rule.infrastructureType as RuleView['infrastructureType'],
    actionLimit: rule.actionLimit,
    flapping: rule.flapping,
    approval: rule.approval,
    approvalRequired: approvalTerms(rule) !== null,
    createdAt: iso(rule.createdAt),
    updatedAt: iso(rule.updatedAt),
    lastEvent: lastEvent && { id: lastEvent.id, outcome: lastEvent.outcome, receivedAt: iso(lastEvent.received_at) },
    lastExecution: lastExecution && {
      id: lastExecution.id,
      state: lastExecution.state,
      hostname: lastExecution.hostname,
      queuedAt: iso(lastExecution.queued_at),
      finishedAt: lastExecution.finished_at === null ? null : iso(lastExecution.finished_at),
    },
    ...(rule.trigger.type === 'cron' ? { schedule: presentSchedule(rule.trigger, rule.enabled ? schedule : null) } : {}),
  };
}

/** How many ticks a cron rule's view lists. */
export const NEXT_TICKS = 5;

/**
 * A cron rule's next ticks, from the one its schedule waits for (none while paused or after its
 * last), and the tick that waits for the previous run to end. The last tick is the rule's lastEvent.
 */
function presentSchedule(trigger: CronTrigger, schedule: RuleActivity['schedule']): NonNullable<RuleView['schedule']> {
  const waitingTick = schedule?.waiting_tick == null ? null : iso(schedule.waiting_tick);
  if (!schedule || schedule.next_at >= MAX_DATE_MS) return { nextTicks: [], waitingTick };
  const ticks = [schedule.next_at, ...nextTicks(trigger, schedule.next_at, NEXT_TICKS - 1)];
  return { nextTicks: ticks.map(iso), waitingTick };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function presentTrigger(rule: Rule, baseUrl: string): RuleView['trigger'] {
  if (rule.trigger.type !== 'webhook' || !rule.triggerId) return { ...rule.trigger };
  const webhookUrl = baseUrl + webhookPath(API_KEY_PLACEHOLDER, rule.triggerId);
  // The key stays out of the rule (it is stored hashed); the shell fills it in from the environment.
  const shellUrl = baseUrl + webhookPath('${PITCREW_API_KEY}', rule.triggerId);
  return { type: 'webhook', triggerId: rule.triggerId, webhookUrl, curl: curlPost(shellUrl, sampleBody(rule)) };
}
