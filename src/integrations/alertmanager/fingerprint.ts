/**
 * Alertmanager's fingerprint of an alert: prometheus/common `model.LabelSet.Fingerprint()`
 * (model/signature.go labelSetToFingerprint, model/fnv.go, model/fingerprinting.go), which
 * Alertmanager puts in the `fingerprint` field of its webhook alerts and of `GET /api/v2/alerts`.
 * FNV-1a 64 over the label names in byte order, each name and value followed by the separator
 * byte 0xff; an empty set is FNV's offset basis; printed as 16 lower-case hex digits.
 *
 * A Prometheus `ALERTS` series carries the alert's labels plus `__name__` and `alertstate`; without
 * those two it is the label set Prometheus sends Alertmanager (when Prometheus has no
 * external_labels: those are added on the way out and are not in the series).
 */
const OFFSET_64 = 14695981039346656037n;
const PRIME_64 = 1099511628211n;
const MASK_64 = (1n << 64n) - 1n;
const SEPARATOR = 0xff;

export function labelSetFingerprint(labels: Record<string, string>): string {
  const names = Object.keys(labels).map((name) => Buffer.from(name, 'utf8')).sort(Buffer.compare);
  let hash = OFFSET_64;
  const add = (byte: number) => {
    hash = ((hash ^ BigInt(byte)) * PRIME_64) & MASK_64;
  };
  for (const name of names) {
    for (const byte of name) add(byte);
    add(SEPARATOR);
    for (const byte of Buffer.from(labels[name.toString('utf8')]!, 'utf8')) add(byte);
    add(SEPARATOR);
  }
  return hash.toString(16).padStart(16, '0');
}

/** The labels of an `ALERTS` or `ALERTS_FOR_STATE` series as Alertmanager has the alert: less `__name__` and `alertstate`. */
export function alertLabels(series: Record<string, string>): Record<string, string> {
  const { __name__: _name, alertstate: _state, ...labels } = series;
  return labels;
}
