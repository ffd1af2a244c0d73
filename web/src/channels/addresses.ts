/** Email addresses typed one a line (or separated by commas, as pasted from a mail client). */
export function splitAddresses(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).filter(Boolean))];
}

// Only a quick check before sending: the service validates each address again.
const ADDRESS = /^[^\s@]+@[^\s@]+$/;

/** The first address that cannot be one, for a message at the field. */
export function badAddress(addresses: string[]): string | undefined {
  return addresses.find((address) => !ADDRESS.test(address));
}
