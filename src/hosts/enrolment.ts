import { PitcrewError } from '../errors/catalogue.js';
import type { HostRow } from '../store/schema.js';

/**
 * What an enrolment may do with the host name it asks for. An existing host is taken over only
 * when the agent says so (--replace), online or not: the offline moment (a reboot, a crash, a
 * network cut) is exactly when a stolen key would strike, and an agent whose credential was
 * replaced must not silently take its host back when the new one blinks (docs/agent.md).
 */
export type EnrolmentDecision =
  | { kind: 'new' }
  | { kind: 'replace'; host: HostRow; wasOnline: boolean }
  | { kind: 'refuse'; host: HostRow; online: boolean };

export function decideEnrolment(existing: HostRow | undefined, replace: boolean): EnrolmentDecision {
  if (!existing) return { kind: 'new' };
  const online = existing.session_id !== null;
  return replace ? { kind: 'replace', host: existing, wasOnline: online } : { kind: 'refuse', host: existing, online };
}

/** The 409 an agent shows its operator: which host, whether it is live, and how to replace it. */
export function alreadyEnrolled(host: HostRow, online: boolean): PitcrewError {
  const state = online
    ? 'its agent is connected now'
    : `its agent is offline${host.last_seen_at === null ? '' : ` (last seen ${new Date(host.last_seen_at).toISOString()})`}`;
  return new PitcrewError(
    'PITCREW_ERR_HOST_ALREADY_ENROLLED',
    `host ${host.hostname} is already enrolled and ${state}. If this machine replaces it, start the agent with --replace `
    + `(or forget the host first: DELETE /api/v1/hosts/${host.id}); if it is another machine, give it its own --hostname`,
  );
}
