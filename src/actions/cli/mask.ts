/** What a secret, or a piece of one, becomes in a run's output. */
export const MASK = '********';
/** Shorter values are not masked: "1" or "eu" would mask half the output and hide nothing. */
const MIN_SECRET_LENGTH = 6;
/** Any run of this many characters of a secret is masked: a runbook printing half a key leaks half a key. */
const PIECE = 10;

type Span = [start: number, end: number];

/**
 * Masks credential values in a run's output: whole values, and any run of PIECE or more of their
 * characters (a value cut by `head -c`, or by the output limit), also across the chunks output
 * arrives in: the end of a chunk is held back until the next chunk shows what it continues. Values
 * as they are only: a runbook that prints one encoded (base64, reversed) defeats it, as it defeats
 * every CI system's masking (docs/cli-machine.md).
 */
export class SecretMask {
  private readonly secrets: string[];
  /** Every PIECE-long run of characters of a secret. */
  private readonly pieces = new Set<string>();
  private held = '';

  constructor(secrets: readonly string[]) {
    // Longest first: a secret that contains another is masked whole.
    this.secrets = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
    for (const secret of this.secrets) for (let at = 0; at + PIECE <= secret.length; at++) this.pieces.add(secret.slice(at, at + PIECE));
  }

  /** A mask of the same secrets for another stream (each holds back its own end). */
  fork(): SecretMask {
    return new SecretMask(this.secrets);
  }

  /** The chunk's text safe to show now; its end waits for the next chunk. */
  push(chunk: string): string {
    const text = this.held + chunk;
    const spans = this.spans(text);
    let cut = Math.max(0, text.length - Math.max(PIECE - 1, this.secretStartAtEnd(text)));
    // A masked span the cut would split waits whole: the next chunk may extend it.
    for (const [start, end] of spans) if (start < cut && end > cut) cut = start;
    this.held = text.slice(cut);
    return render(text.slice(0, cut), spans.filter(([, end]) => end <= cut));
  }

  /** The rest, at the end of the stream. */
  end(): string {
    const rest = this.text(this.held);
    this.held = '';
    return rest;
  }

  /** A whole text with every secret and piece of one masked. */
  text(whole: string): string {
    return render(whole, this.spans(whole));
  }

  /** Where the text shows secrets or pieces of them, in order, merged. */
  private spans(text: string): Span[] {
    const found: Span[] = [];
    for (const secret of this.secrets) {
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + secret.length)) found.push([at, at + secret.length]);
    }
    if (this.pieces.size > 0) {
      for (let at = 0; at + PIECE <= text.length; at++) if (this.pieces.has(text.slice(at, at + PIECE))) found.push([at, at + PIECE]);
    }
    found.sort((a, b) => a[0] - b[0]);
    const merged: Span[] = [];
    for (const span of found) {
      const last = merged.at(-1);
      if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
      else merged.push([...span]);
    }
    return merged;
  }

  /** The length of the longest end of `text` that is a proper start of a secret. */
  private secretStartAtEnd(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      // Only where the secret's first character appears: earliest first, so the first hit is the longest.
      const from = Math.max(0, text.length - (secret.length - 1));
      for (let at = text.indexOf(secret[0]!, from); at !== -1 && text.length - at > longest; at = text.indexOf(secret[0]!, at + 1)) {
        if (secret.startsWith(text.slice(at))) {
          longest = text.length - at;
          break;
        }
      }
    }
    return longest;
  }
}

function render(text: string, spans: readonly Span[]): string {
  let out = '';
  let from = 0;
  for (const [start, end] of spans) {
    out += text.slice(from, start) + MASK;
    from = end;
  }
  return out + text.slice(from);
}
