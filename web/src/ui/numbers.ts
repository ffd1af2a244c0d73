/** Why `text` is not a whole number from `min` to `max`, or undefined when it is one. */
export function wholeNumberError(text: string, min: number, max: number): string | undefined {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(value)) return 'enter a whole number';
  if (value < min || value > max) return `must be from ${min} to ${max}`;
  return undefined;
}

// NaN becomes null in JSON: the service then names the field, as for any other wrong value.
export const toNumber = (text: string) => Number(text.trim());
