import { StringDecoder } from 'node:string_decoder';

/**
 * One output stream of a script, kept up to a byte limit. Live text is decoded as it arrives
 * (a character split across chunks waits for its end); the final text is cut on a character
 * boundary so it stays valid UTF-8.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private overflowed = false;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly limit: number) {}

  /** Keeps what fits and returns it as text for live output ('' when nothing new fits). */
  push(chunk: Buffer): string {
    if (this.overflowed) return '';
    const room = this.limit - this.kept;
    const accepted = chunk.length <= room ? chunk : chunk.subarray(0, room);
    if (accepted.length < chunk.length) this.overflowed = true;
    this.chunks.push(accepted);
    this.kept += accepted.length;
    return this.decoder.write(accepted);
  }

  get truncated(): boolean {
    return this.overflowed;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(0, this.overflowed ? characterBoundary(all) : all.length).toString('utf8');
  }
}

/** The length of `bytes` without a trailing incomplete UTF-8 sequence. */
export function characterBoundary(bytes: Buffer): number {
  let start = bytes.length - 1;
  // Back over at most 3 continuation bytes (10xxxxxx) to the lead byte of the last character.
  while (start >= 0 && bytes.length - start <= 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return 0;
  const lead = bytes[start]!;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - start >= needed ? bytes.length : start;
}
