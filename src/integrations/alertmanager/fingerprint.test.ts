import { describe, expect, it } from 'vitest';
import { alertLabels, labelSetFingerprint } from './fingerprint.js';

// prometheus/common model/signature_test.go (TestMetricToFingerprint, BenchmarkMetricToFingerprintTriple):
// the empty set is FNV-1a's offset basis; {name: "garland, briggs", fear: "love is not enough"}
// is 5799056148416392346; the three first/second/third labels 13843036195897128121.
// test/import-alertmanager.test.ts compares with a real Alertmanager.
describe('labelSetFingerprint (prometheus/common model.LabelSet.Fingerprint)', () => {
  it('gives the values of prometheus/common’s own tests', () => {
    expect(labelSetFingerprint({})).toBe(14695981039346656037n.toString(16));
    expect(labelSetFingerprint({ name: 'garland, briggs', fear: 'love is not enough' })).toBe(5799056148416392346n.toString(16).padStart(16, '0'));
    const triple = { 'first-label': 'first-label-value', 'second-label': 'second-label-value', 'third-label': 'third-label-value' };
    expect(labelSetFingerprint(triple)).toBe(13843036195897128121n.toString(16).padStart(16, '0'));
  });

  it('orders label names, not insertion, and hashes UTF-8 bytes', () => {
    expect(labelSetFingerprint({ b: '1', a: '2' })).toBe(labelSetFingerprint({ a: '2', b: '1' }));
    expect(labelSetFingerprint({ team: 'opérations' })).not.toBe(labelSetFingerprint({ team: 'operations' }));
    // The separator keeps a name/value boundary from moving.
    expect(labelSetFingerprint({ ab: 'c' })).not.toBe(labelSetFingerprint({ a: 'bc' }));
  });

  it('leaves out __name__ and alertstate of an ALERTS series', () => {
    const series = { __name__: 'ALERTS', alertstate: 'firing', alertname: 'DiskFull', instance: 'web-1:9100' };
    expect(alertLabels(series)).toEqual({ alertname: 'DiskFull', instance: 'web-1:9100' });
  });
});
