// Numbers in names compare as numbers (web-2 before web-10), letters without case, as DNS names are.
const NAMES = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Hosts in the order people count them: by hostname, web-2 before web-10, Web-1 beside web-1. */
export function byHostname<T extends { hostname: string }>(hosts: readonly T[]): T[] {
  return [...hosts].sort((a, b) => NAMES.compare(a.hostname, b.hostname) || (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0));
}
