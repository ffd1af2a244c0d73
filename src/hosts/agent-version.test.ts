import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../agent/version.js';
import { RELEASE_VERSION, isOutdated } from './agent-version.js';

describe('isOutdated', () => {
  it.each([
    ['0.1.0', '0.2.0', true],
    ['0.1.9', '0.1.10', true],
    ['0.9.0', '1.0.0', true],
    ['1.2.3', '1.2.3', false],
    ['1.2.4', '1.2.3', false],
    ['2.0.0', '1.9.9', false],
    ['0.1.0-rc.1', '0.1.0', false],
    ['0.1.0', '0.2.0+build.7', true],
    ['raw', '0.1.0', false],
    ['', '0.1.0', false],
    ['0.1', '0.1.0', false],
  ])('agent %s, service %s: %s', (agent, service, outdated) => {
    expect(isOutdated(agent, service)).toBe(outdated);
  });
});

describe('RELEASE_VERSION', () => {
  it("is package.json's version, and the agent's", () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(RELEASE_VERSION).toBe(pkg.version);
    expect(AGENT_VERSION).toBe(pkg.version);
  });
});
