/**
 * This release's version: package.json's, which its agent also reports (agent/version.ts);
 * a test keeps the three equal. Bumped at release time (docs/operations.md, Releasing).
 */
export const RELEASE_VERSION = '0.2.0';

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/;

/**
 * Whether an agent reporting `agentVersion` is an older release than the service's: its
 * major.minor.patch is lower (pre-release and build suffixes aside). An agent one release behind
 * keeps working (docs/agent.md, Versions); this only says an update is due. A version that is not
 * major.minor.patch (a hand-built agent) cannot be placed, and is not called outdated.
 */
export function isOutdated(agentVersion: string, serviceVersion: string = RELEASE_VERSION): boolean {
  const agent = SEMVER.exec(agentVersion);
  const service = SEMVER.exec(serviceVersion);
  if (!agent || !service) return false;
  for (let part = 1; part <= 3; part++) {
    const difference = Number(agent[part]) - Number(service[part]);
    if (difference !== 0) return difference < 0;
  }
  return false;
}
