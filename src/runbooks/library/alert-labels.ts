import { assertNever } from '../../errors/assert-never.js';
import type { Interpreter } from '../schema.js';
import type { StarterRunbook } from './catalogue.js';

/*
 * A starter runbook reads plain variables ($ServiceName); an alert's runs get the alert's labels
 * as LABEL_<name> (ingress/alert-payload.ts). When the one-click automation writes a starter into
 * a rule, these are the labels that obviously say what a variable wants (docs/incidents.md,
 * "One-click automation"): the rule's script then takes the variable from the label by default,
 * and a variable given explicitly (a webhook's, a rule's) still wins.
 */

/**
 * For each starter variable, the label names that mean it, in order of preference, lower case.
 * `name` is node_exporter's systemd collector's label for a unit; `filepath` the x509 certificate
 * exporter's; a certificate alarm's `instance` is the probed endpoint (the blackbox exporter's).
 */
export const VARIABLE_LABELS: Readonly<Record<string, readonly string[]>> = {
  ServiceName: ['service', 'service_name', 'systemd_unit', 'unit', 'name'],
  LogFile: ['logfile', 'log_file', 'log_path'],
  CertEndpoints: ['instance', 'endpoint', 'target'],
  CertFiles: ['filepath', 'cert_file', 'certfile'],
};

/** A starter variable taken from an alert's labels: the first of `labels` (LABEL_ variable names) that is set. */
export interface LabelDefault {
  variable: string;
  labels: string[];
}

/**
 * The variable an alert's label or annotation reaches a runbook as (ingress/alert-payload.ts):
 * the prefix and the name, any character a shell variable cannot hold written as `_`.
 */
export function alertVariable(prefix: 'LABEL_' | 'ANNOTATION_', name: string): string {
  return prefix + name.replace(/[^A-Za-z0-9_]/g, '_');
}

export function labelVariable(label: string): string {
  return alertVariable('LABEL_', label);
}

/**
 * The starter's variables that an alert with these label names can give, each with the matching
 * labels' variables in the table's order (names compared without case, `-` as `_`).
 */
export function labelDefaults(starter: Pick<StarterRunbook, 'env'>, labelNames: readonly string[]): LabelDefault[] {
  const byKey = new Map<string, string>();
  for (const name of labelNames) {
    const key = name.toLowerCase().replace(/-/g, '_');
    if (!byKey.has(key)) byKey.set(key, name);
  }
  return starter.env.flatMap((variable) => {
    const labels = (VARIABLE_LABELS[variable] ?? []).flatMap((key) => (byKey.has(key) ? [labelVariable(byKey.get(key)!)] : []));
    return labels.length === 0 ? [] : [{ variable, labels }];
  });
}

/**
 * The lines that give each variable its labels' value unless it is set already, in the
 * interpreter's syntax, ending in a newline; empty for none. In sh: `: "${ServiceName:=${LABEL_service:-}}"`.
 */
export function labelPrelude(interpreter: Interpreter, defaults: readonly LabelDefault[]): string {
  if (defaults.length === 0) return '';
  const lines = defaults.map(({ variable, labels }) => preludeLine(interpreter, variable, labels));
  const head = interpreter === 'python' ? ['import os'] : [];
  // '#' starts a comment in all four interpreters.
  return [`# from the alert's labels unless set (pitcrew one-click automation)`, ...head, ...lines, ''].join('\n');
}

function preludeLine(interpreter: Interpreter, variable: string, labels: readonly string[]): string {
  switch (interpreter) {
    case 'sh':
    case 'bash':
      return `: "\${${variable}:=${labels.reduceRight((rest, label) => `\${${label}:-${rest}}`, '')}}"`;
    case 'python':
      return `os.environ['${variable}'] = os.environ.get('${variable}') or ${labels.map((l) => `os.environ.get('${l}')`).join(' or ')} or ''`;
    case 'pwsh':
      return `if (-not $env:${variable}) { $env:${variable} = @(${labels.map((l) => `$env:${l}`).join(', ')}) | Where-Object { $_ } | Select-Object -First 1 }`;
    default:
      return assertNever(interpreter);
  }
}
