/**
 * A `curl` command that POSTs JSON, ready to paste into a shell: what a rule's webhook and an
 * integration's URL show beside the URL. The URL sits in double quotes, so the shell fills in what
 * stays out of the service's replies (`${PITCREW_API_KEY}`, `${PITCREW_TOKEN}`); header values in
 * double quotes too, for the same reason; the body in single quotes, as the shell must not touch it.
 */
export function curlPost(url: string, body: unknown, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers).map(([name, value]) => ` -H "${name}: ${value}"`).join('');
  return `curl -sS -X POST "${url}"${extra} -H 'Content-Type: application/json' -d ${singleQuoted(JSON.stringify(body))}`;
}

/** Text as one shell word that the shell leaves alone: a `'` inside closes, escapes and reopens the quotes. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
