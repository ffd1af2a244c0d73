/** How long ago (or ahead) `iso` is, the way people say it: "12 s ago", "3 min ago", "2 d ago". */
export function relativeTime(iso: string, now: number): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  const ahead = seconds < 0;
  const s = Math.abs(seconds);
  const amount = s < 5 ? null : s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : s < 86_400 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86_400)} d`;
  if (amount === null) return 'just now';
  return ahead ? `in ${amount}` : `${amount} ago`;
}

/** A duration for a table cell: "420 ms", "12.3 s", "4 min 05 s", "2 h 03 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A span of seconds as settings show it: "300 s (5 min)". */
export function seconds(total: number): string {
  if (total < 60 || total % 60 !== 0) return `${total} s`;
  const minutes = total / 60;
  if (minutes < 60 || minutes % 60 !== 0) return `${total} s (${minutes} min)`;
  return `${total} s (${minutes / 60} h)`;
}

export function absoluteTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
