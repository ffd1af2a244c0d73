import { describe, expect, it } from 'vitest';
import { COMPANION_WAIT_MS, graphNote, readyToReport, type RunMemberWithRole } from './run-graphs.js';
import { inlineGraphs, MAIL_IMAGE_BYTES_MAX, MAIL_IMAGES_MAX } from './messages/email.js';
import type { RunNotification, SnapshotRef } from './notification.js';

const GROUP_WAIT = 300_000;
const active = (fixes: string[], companions: string[]) => ({ fixes: new Set(fixes), companions: new Set(companions) });

describe('when a run with a companion capture is reported', () => {
  it.each([
    ['its fix still runs', active(['e'], []), 0, false],
    ['its fix still runs, its capture too', active(['e'], ['e']), COMPANION_WAIT_MS, false],
    ['all ended', active([], []), 0, true],
    ['the fix ended, the capture runs, within the wait', active([], ['e']), COMPANION_WAIT_MS - 1, false],
    ['the fix ended, the capture runs, the wait is over', active([], ['e']), COMPANION_WAIT_MS, true],
    ['the grouping wait is over whatever runs', active(['e'], ['e']), GROUP_WAIT, true],
  ])('%s', (_, running, elapsed, ready) => {
    expect(readyToReport('e', 1000, running, GROUP_WAIT, 1000 + elapsed)).toBe(ready);
  });

  it('never waits longer for the capture than the grouping wait', () => {
    expect(readyToReport('e', 1000, active([], ['e']), 5_000, 6_000)).toBe(true);
  });
});

describe('what a fix message says of its capture without pictures', () => {
  const capture = (state: string, reason: string | null = null): RunMemberWithRole => ({ id: 'c', state, hostname: 'web-1', companion: 1, reason });
  it.each([
    ['no capture', [], 0, undefined],
    ['pictures shown', [capture('succeeded')], 1, undefined],
    ['still running', [capture('running')], 0, 'the graphs are still being captured: they come in a message of their own'],
    ['failed', [capture('failed', 'Prometheus did not answer')], 0, 'the graphs were not captured (failed): Prometheus did not answer'],
    ['timed out', [capture('timed_out', 'over 2 min')], 0, 'the graphs were not captured (timed out): over 2 min'],
  ])('%s', (_, companions, pictures, note) => {
    expect(graphNote(companions, pictures)).toBe(note);
  });
});

describe('the pictures a mail carries inline', () => {
  const ref = (id: string, bytes: number, contentType = 'image/png'): SnapshotRef => ({ id, title: id, contentType, width: 720, height: 318, bytes, url: null });
  const run = (snapshots: SnapshotRef[]) => ({ kind: 'run', snapshots }) as unknown as RunNotification;

  it('takes PNGs in order up to the count and the bytes, and no SVG', () => {
    const many = Array.from({ length: MAIL_IMAGES_MAX + 2 }, (_, i) => ref(`p${i}`, 1000));
    expect(inlineGraphs(run(many)).map((g) => g.id)).toEqual(many.slice(0, MAIL_IMAGES_MAX).map((g) => g.id));
    expect(inlineGraphs(run([ref('big', MAIL_IMAGE_BYTES_MAX - 10), ref('over', 20), ref('fits', 10)])).map((g) => g.id)).toEqual(['big', 'fits']);
    expect(inlineGraphs(run([ref('svg', 100, 'image/svg+xml'), ref('png', 100)])).map((g) => g.id)).toEqual(['png']);
  });
});
