import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from './spelling.js';

describe('closestName', () => {
  it.each([
    ['flavor', ['type', 'flavour', 'runbook', 'timeoutSeconds'], 'flavour'],
    ['hostName', ['type', 'hostname', 'tags'], 'hostname'],
    ['windowSecs', ['max', 'windowSeconds', 'onLimit'], 'windowSeconds'],
    ['tag', ['type', 'hostname', 'tags'], 'tags'],
    ['infrastructuretype', ['name', 'infrastructureType'], 'infrastructureType'],
    ['runbok', ['runbook'], 'runbook'],
    ['surprise', ['type', 'hostname', 'tags'], undefined],
    ['per', ['max', 'windowSeconds', 'onLimit'], undefined],
    // Two fields as near: no guess.
    ['ab', ['ax', 'xb'], undefined],
  ])('%s among %j: %s', (name, known, expected) => {
    expect(closestName(name, known)).toBe(expected);
  });
});

describe('editDistance', () => {
  it.each([
    ['', '', 0], ['abc', '', 3], ['flavor', 'flavour', 1], ['hostnmae', 'hostname', 1], ['kitten', 'sitting', 3],
  ])('%s → %s: %d', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});
