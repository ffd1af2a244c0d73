import { resolveTargets, type EventFacts, type HostFacts, type RuleFacts, type ServiceFanout } from '../../engine/decide.js';
import { pickOf, type Rule } from '../../rules/rule.js';
import { providerOf } from '../../rules/validate.js';
import type { Provider } from '../../credentials/schema.js';
import type { ActionKind, KindSpec } from '../kind.js';
import { GCE_INSTANCE, GCE_SHAPE, gceInstanceName } from './gce-names.js';
import { times } from '../../errors/counts.js';

type CloudAction = Extract<Rule['action'], { type: 'cloud' }>;
type Instances = NonNullable<CloudAction['instances']>;
export type CloudOperation = CloudAction['operation'];

/** What one cloud execution does, copied from the rule when the event arrives: one operation on one instance. */
export interface CloudSpec extends KindSpec {
  kind: 'cloud';
  provider: Provider;
  operation: CloudOperation;
  region: string;
  credentialId: string | null;
  /** The instance it acts on; '' while `tags` are to be resolved. */
  instanceId: string;
  /**
   * A provider tag filter to resolve when it runs (actions/cloud/tagged.ts): the run then queues
   * one execution per instance found, each within `actionLimit` as the rule's limit was then.
   */
  tags?: Record<string, string>;
  actionLimit?: { max: number; windowSeconds: number } | null;
  /** The action's fan-out, for the instances a tag filter finds (its own run is outside it). */
  fanout?: ServiceFanout | null;
  /** How long it waits for the instance to reach its state. */
  waitSeconds: number;
  /** The run's own limit: the wait and a minute for the calls. */
  timeoutSeconds: number;
}

const DEFAULT_TIMEOUT_SECONDS = 300;
/** The payload field (or MetaData key) a cloud action reads its instance id from, unless it names another. */
export const DEFAULT_INSTANCE_FIELD = 'InstanceId';
/** An EC2 instance id (i- and 8 or 17 hexadecimal digits). */
const EC2_INSTANCE = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
/** A Nova server id (a UUID). */
const NOVA_SERVER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * An Azure VM: its resource id (segment names in any case, as ARM reads them) or resourceGroup/vmName
 * in the credential's subscription. Groups are letters, digits and _ ( ) - . (up to 90), VM names
 * letters, digits and _ - . (up to 64: resource-name-rules); neither may start with a dot, so no
 * name walks up the request's path.
 */
export const AZURE_VM = /^(?:\/subscriptions\/(?<subscription>[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})\/resourceGroups\/(?<group>[\w()][\w().-]{0,89})\/providers\/Microsoft\.Compute\/virtualMachines\/(?<vm>\w[\w.-]{0,63})|(?<shortGroup>[\w()][\w().-]{0,89})\/(?<shortVm>\w[\w.-]{0,63}))$/i;

/** Each cloud's name for people, and how it names an instance. */
const CLOUDS = {
  aws: { name: 'EC2', instance: EC2_INSTANCE, shape: 'an EC2 instance id (i- and 8 or 17 hexadecimal digits)' },
  openstack: { name: 'Nova', instance: NOVA_SERVER, shape: 'a Nova server id (a UUID)' },
  gcp: { name: 'Compute Engine', instance: GCE_INSTANCE, shape: GCE_SHAPE },
  azure: { name: 'Azure', instance: AZURE_VM, shape: 'an Azure VM (/subscriptions/…/resourceGroups/…/providers/Microsoft.Compute/virtualMachines/…, or resourceGroup/vmName)' },
} as const satisfies Record<Provider, { name: string; instance: RegExp; shape: string }>;

/**
 * A VM operation at the rule's cloud provider, run by the service (actions/cloud/runner.ts), one
 * execution per instance: the action limit counts per instance as it counts per host, so an
 * alert storm calls the provider at most `max` times per instance per window. Instances a tag
 * filter names are found when its run starts (tagged.ts).
 */
export const cloudKind: ActionKind = {
  type: 'cloud',
  escalatesAtLimit: false,
  plan(rule, event, hosts) {
    const action = cloudAction(rule);
    const provider = providerOfAction(rule);
    if (!provider) return 'the rule names no cloud: set action.provider, or a cloud infrastructureType';
    const chosen = action.instances ?? { from: 'payload' as const };
    if ('tags' in chosen) return { runsOn: 'service', runs: [{ about: undefined, unlimited: true }] };
    const instances = instancesOf(rule, provider, chosen, event, hosts);
    return typeof instances === 'string' ? instances : { runsOn: 'service', runs: instances.map((about) => ({ about })) };
  },
  fanout(rule) {
    const action = cloudAction(rule);
    // A tag filter's own run is no instance: the fan-out is the instances it finds (tagged.ts).
    return action.instances && 'tags' in action.instances ? undefined : fanoutOf(action);
  },
  limitedReason(used, about, limit) {
    return `the cloud action ran ${times(used)} on instance ${about ?? '?'} within ${limit.windowSeconds} s, its action limit (max ${limit.max}): not called again`;
  },
  spec(rule, run): CloudSpec {
    const action = cloudAction(rule);
    const tagged = action.instances && 'tags' in action.instances ? { tags: action.instances.tags, actionLimit: rule.actionLimit ? { max: rule.actionLimit.max, windowSeconds: rule.actionLimit.windowSeconds } : null, fanout: fanoutOf(action) ?? null } : {};
    return {
      kind: 'cloud',
      provider: providerOfAction(rule)!,
      operation: action.operation,
      // OpenStack: none means the credential's region, or the catalog's only one.
      region: action.region ?? '',
      credentialId: action.credentialId ?? null,
      instanceId: 'tags' in tagged ? '' : run.hostname,
      ...tagged,
      waitSeconds: action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      timeoutSeconds: (action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) + 60,
    };
  },
  describe(spec) {
    const provider = spec.provider as Provider;
    const cloud = CLOUDS[provider] ?? CLOUDS.aws;
    const what = isCloudSpec(spec) && spec.tags ? taggedWords(provider, spec.tags) : `${NOUNS[provider] ?? 'instance'} ${String(spec.instanceId)}`;
    return `${String(spec.operation)} ${cloud.name} ${what}${spec.region ? ` in ${String(spec.region)}` : ''}`;
  },
  notDone(rule, instance) {
    return `did not ${cloudAction(rule).operation} instance ${instance} for this alarm or later ones in the window`;
  },
};

function fanoutOf(action: CloudAction): ServiceFanout | undefined {
  const { maxConcurrency = null, maxErrors = null } = action;
  return maxConcurrency === null && maxErrors === null ? undefined : { maxConcurrency, maxErrors };
}

/** What each cloud calls an instance, and the name: value pairs a tag filter matches. */
const NOUNS: Record<Provider, string> = { aws: 'instance', azure: 'VM', gcp: 'instance', openstack: 'server' };
const TAGGED: Record<Provider, string> = { aws: 'tagged', azure: 'tagged', gcp: 'labelled', openstack: 'with metadata' };

/** A tag filter in words, as its cloud says it: "instances labelled env=prod, role=web". */
export function taggedWords(provider: Provider, tags: Readonly<Record<string, string>>): string {
  return `${NOUNS[provider] ?? 'instance'}s ${TAGGED[provider] ?? 'tagged'} ${Object.entries(tags).map(([name, value]) => `${name}=${value}`).join(', ')}`;
}

/**
 * The instances the event asks for, or why there are none: the payload's field, else the cloud
 * instances of the rule's target hosts (PATCH /api/v1/hosts/{id} {cloudInstanceId}): the host the
 * alert names, the rule's host, or the hosts of its tags. (Tags at the provider are resolved when
 * the run starts, not here: actions/cloud/tagged.ts.)
 */
function instancesOf(rule: RuleFacts, provider: Provider, instances: Exclude<Instances, { tags: unknown }>, event: EventFacts, hosts: readonly HostFacts[]): string[] | string {
  if ('ids' in instances) return instances.ids;
  const field = instances.field ?? DEFAULT_INSTANCE_FIELD;
  const value = event.env?.[field]?.trim();
  if (!value) return instancesOfHosts(rule, event, hosts, field);
  // A GCE selfLink is recorded as the path it holds (one instance, one action limit), a name alone with the action's zone.
  const id = provider === 'gcp' ? gceInstanceName(value, cloudAction(rule).region) : CLOUDS[provider].instance.test(value) ? value : undefined;
  if (id === undefined) return `${field} is "${value.slice(0, 64)}", not ${CLOUDS[provider].shape}`;
  return [id];
}

function instancesOfHosts(rule: RuleFacts, event: EventFacts, hosts: readonly HostFacts[], field: string): string[] | string {
  const none = `the payload names no instance (send its id in ${field}, or set the action's instances.field)`;
  if (rule.target.type === 'trigger_host' && !event.hostName) return `${none}, nor a host whose cloud instance id is set (HostName)`;
  const targets = resolveTargets(rule.target, event, hosts, pickOf(rule));
  if (typeof targets === 'string') return `${none}, and ${targets}`;
  const ids = [...new Set(targets.flatMap((host) => (host.cloudInstanceId ? [host.cloudInstanceId] : [])))];
  if (ids.length > 0) return ids;
  const names = targets.slice(0, 5).map((host) => host.hostname).join(', ');
  return `${none}, and ${targets.length === 1 ? `host ${names} has no` : `none of the hosts ${names} has a`} cloud instance id: set it with PATCH /api/v1/hosts/{id} {"cloudInstanceId": "…"}`;
}

function providerOfAction(rule: RuleFacts): Provider | undefined {
  return cloudAction(rule).provider ?? (rule.infrastructureType === undefined ? undefined : providerOf(rule.infrastructureType));
}

export function isCloudSpec(spec: unknown): spec is CloudSpec {
  return typeof spec === 'object' && spec !== null && (spec as { kind?: unknown }).kind === 'cloud';
}

function cloudAction(rule: Pick<RuleFacts, 'action'>): CloudAction {
  if (rule.action.type !== 'cloud') throw new Error(`a ${rule.action.type} action is not a cloud action`);
  return rule.action;
}
