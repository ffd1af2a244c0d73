import { GCE_ZONE } from '../../rules/validate.js';

/** A Compute Engine instance as the API's paths take it. */
export interface GceInstance {
  project: string;
  zone: string;
  name: string;
}

// https://cloud.google.com/compute/docs/naming-resources: instance names are RFC 1035 labels of 1
// to 63 characters; project ids 6 to 30 lowercase letters, digits and dashes (older projects may
// carry a domain, example.com:my-project).
const NAME = '[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?';
const PROJECT = '(?:[a-z][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]';
const ZONE = GCE_ZONE.source.slice(1, -1);
/** projects/P/zones/Z/instances/N, or the same as the instance's selfLink URL. */
const FULL = new RegExp(`^(?:https://(?:www|compute)\\.googleapis\\.com/compute/(?:v1|beta|alpha)/)?projects/(${PROJECT})/zones/(${ZONE})/instances/(${NAME})$`);
/** ZONE/NAME, in the credential's project. */
const SHORT = new RegExp(`^(${ZONE})/(${NAME})$`);
const BARE = new RegExp(`^${NAME}$`);

/** Every form an action may name a GCE instance by (the name alone needs the action's zone). */
export const GCE_INSTANCE = new RegExp(`${FULL.source}|${SHORT.source}|${BARE.source}`);

export const GCE_SHAPE = "a Compute Engine instance: projects/PROJECT/zones/ZONE/instances/NAME (or its selfLink URL), ZONE/NAME in the credential's project, or NAME with the zone as the action's region";

/**
 * The instance an alert names, as executions record it (and action limits count it): the full path
 * for the full form and the selfLink, ZONE/NAME for the short form and for a name alone when the
 * action names the zone; undefined when `text` is none of these.
 */
export function gceInstanceName(text: string, zone: string | undefined): string | undefined {
  const full = FULL.exec(text);
  if (full) return gceInstancePath({ project: full[1]!, zone: full[2]!, name: full[3]! });
  if (SHORT.test(text)) return text;
  return zone && GCE_ZONE.test(zone) && BARE.test(text) ? `${zone}/${text}` : undefined;
}

/** The instance `text` names, in `project` (the key's) and `zone` (the action's) when it leaves them out. */
export function parseGceInstance(text: string, project: string, zone: string | undefined): GceInstance | undefined {
  const full = FULL.exec(text);
  if (full) return { project: full[1]!, zone: full[2]!, name: full[3]! };
  const short = SHORT.exec(text);
  if (short) return { project, zone: short[1]!, name: short[2]! };
  return zone && GCE_ZONE.test(zone) && BARE.test(text) ? { project, zone, name: text } : undefined;
}

export function gceInstancePath(instance: GceInstance): string {
  return `projects/${instance.project}/zones/${instance.zone}/instances/${instance.name}`;
}

/** The last segment of a zone URL or path (https://…/projects/p/zones/us-central1-a → us-central1-a). */
export function zoneOf(zoneUrl: string | null | undefined): string {
  return zoneUrl?.slice(zoneUrl.lastIndexOf('/') + 1) ?? '';
}
