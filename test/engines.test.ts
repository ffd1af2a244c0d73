import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

// The supported lines (README "Supported runtimes"): users run Node 22 or 24, and 20 still works;
// CI runs each (.ci/run). A dependency whose engines leave one of them out installs with a warning
// there and may break at run time, so the oldest release of each line the project's own tools
// accept must satisfy every package installed.
const NODE_LINES = ['20.19.0', '22.13.0', '24.0.0'];

describe('dependencies', () => {
  it('declare engines that cover every Node line pitcrew supports', () => {
    const ours = (readJson('package.json').engines as { node: string }).node;
    for (const version of NODE_LINES) expect(semver.satisfies(version, ours), `package.json engines ${ours} against ${version}`).toBe(true);

    const packages = readJson('package-lock.json').packages as Record<string, { version?: string; engines?: { node?: string } }>;
    const refusing = Object.entries(packages)
      .filter(([name, entry]) => name !== '' && typeof entry.engines?.node === 'string')
      .flatMap(([name, entry]) => NODE_LINES.filter((version) => !semver.satisfies(version, entry.engines!.node!)).map((version) => `${name}@${entry.version} needs node ${entry.engines!.node}, not ${version}`));
    expect(refusing).toEqual([]);
  });

  it('accept exactly the Node lines CI tests', () => {
    const ours = (readJson('package.json').engines as { node: string }).node;
    const ci = fs.readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const tested = [...ci.matchAll(/^on_node (\d+) /gm)].map((m) => Number(m[1])).sort((a, b) => a - b);
    expect(tested).toEqual(NODE_LINES.map((version) => semver.major(version)));
    const accepted = Array.from({ length: 12 }, (_, i) => 18 + i).filter((major) => semver.satisfies(`${major}.99.0`, ours));
    expect(accepted).toEqual(tested);
  });
});
