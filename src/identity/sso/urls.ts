/** True for a URL on this machine (localhost, 127.0.0.0/8, ::1): where plain HTTP is tolerated. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A `returnTo` given at the start, kept only when it is a path on this service ("/rules/1"), so
 * the sign-in cannot be used to send a person to another site (an open redirect).
 */
export function safeReturnPath(returnTo: unknown): string {
  if (typeof returnTo !== 'string' || !returnTo.startsWith('/') || returnTo.startsWith('//') || returnTo.includes('\\')) return '/';
  try {
    const resolved = new URL(returnTo, 'http://pitcrew.invalid');
    return resolved.origin === 'http://pitcrew.invalid' ? `${resolved.pathname}${resolved.search}${resolved.hash}` : '/';
  } catch {
    return '/';
  }
}
