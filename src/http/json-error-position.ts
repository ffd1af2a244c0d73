/*
 * Where a JSON text goes wrong, for the line and column of a 400 when V8's own message has no
 * position (an unexpected token, the end of the text). Read as JSON.parse reads (RFC 8259): only a
 * body already refused is read this way, so its speed does not matter, but its depth might: the
 * reading keeps its own stack of open objects and arrays, never the call stack.
 */

/** What may come next: a value, an object's key, the colon after a key, or what follows a value. */
type Expecting = 'value' | 'valueOrEnd' | 'key' | 'keyOrEnd' | 'colon' | 'after';

/** One step of the reading: where it went wrong, or where the next token starts and what it may be. */
type Step = { ok: false; at: number } | { ok: true; at: number; next: Expecting };

const wrongAt = (at: number): Step => ({ ok: false, at });

/**
 * The index of the first character that cannot continue a JSON text: the text's length when it
 * ends too soon, -1 when the text is valid.
 */
export function firstJsonErrorAt(text: string): number {
  const closers: string[] = [];
  let expecting: Expecting = 'value';
  let i = skipBlanks(text, 0);
  while (expecting !== 'after' || closers.length > 0) {
    if (i >= text.length) return text.length;
    const step = STEPS[expecting](text, i, closers);
    if (!step.ok) return step.at;
    expecting = step.next;
    i = skipBlanks(text, step.at);
  }
  return i === text.length ? -1 : i;
}

const STEPS: Record<Expecting, (text: string, i: number, closers: string[]) => Step> = {
  value: (text, i, closers) => openOrScalar(text, i, closers),
  valueOrEnd: (text, i, closers) => (text[i] === ']' ? close(i, closers) : openOrScalar(text, i, closers)),
  key: (text, i) => key(text, i),
  keyOrEnd: (text, i, closers) => (text[i] === '}' ? close(i, closers) : key(text, i)),
  colon: (text, i) => (text[i] === ':' ? { ok: true, at: i + 1, next: 'value' } : wrongAt(i)),
  after: (text, i, closers) => {
    if (text[i] === ',') return { ok: true, at: i + 1, next: closers.at(-1) === '}' ? 'key' : 'value' };
    return text[i] === closers.at(-1) ? close(i, closers) : wrongAt(i);
  },
};

function close(i: number, closers: string[]): Step {
  closers.pop();
  return { ok: true, at: i + 1, next: 'after' };
}

function key(text: string, i: number): Step {
  if (text[i] !== '"') return wrongAt(i);
  const end = stringEnd(text, i);
  return end.ok ? { ok: true, at: end.at, next: 'colon' } : end;
}

function openOrScalar(text: string, i: number, closers: string[]): Step {
  const c = text[i];
  if (c === '{' || c === '[') {
    closers.push(c === '{' ? '}' : ']');
    return { ok: true, at: i + 1, next: c === '{' ? 'keyOrEnd' : 'valueOrEnd' };
  }
  const end = c === '"' ? stringEnd(text, i) : c === 't' || c === 'f' || c === 'n' ? literalEnd(text, i) : numberEnd(text, i);
  return end.ok ? { ok: true, at: end.at, next: 'after' } : end;
}

function skipBlanks(text: string, from: number): number {
  let i = from;
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i += 1;
  return i;
}

function literalEnd(text: string, from: number): Step {
  const word = ['true', 'false', 'null'].find((w) => w[0] === text[from])!;
  for (let k = 1; k < word.length; k += 1) if (text[from + k] !== word[k]) return wrongAt(from + k);
  return { ok: true, at: from + word.length, next: 'after' };
}

/** A number (RFC 8259 §6): wrong where a digit was due (after "-", ".", "e") or where one follows a leading 0. */
function numberEnd(text: string, from: number): Step {
  const isDigit = (at: number) => (text[at] ?? '') >= '0' && (text[at] ?? '') <= '9';
  const digits = (at: number) => {
    let end = at;
    while (isDigit(end)) end += 1;
    return end;
  };
  let i = text[from] === '-' ? from + 1 : from;
  if (!isDigit(i)) return wrongAt(i);
  i = text[i] === '0' ? i + 1 : digits(i);
  if (isDigit(i)) return wrongAt(i);
  if (text[i] === '.') {
    if (!isDigit(i + 1)) return wrongAt(i + 1);
    i = digits(i + 1);
  }
  if (text[i] === 'e' || text[i] === 'E') {
    i += text[i + 1] === '+' || text[i + 1] === '-' ? 2 : 1;
    if (!isDigit(i)) return wrongAt(i);
    i = digits(i);
  }
  return { ok: true, at: i, next: 'after' };
}

function stringEnd(text: string, from: number): Step {
  for (let i = from + 1; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return { ok: true, at: i + 1, next: 'after' };
    if (code < 0x20) return wrongAt(i);
    if (code !== 0x5c) continue;
    const escaped = text[i + 1] ?? '';
    const hex = escaped === 'u' ? /^[0-9a-fA-F]{0,4}/.exec(text.slice(i + 2, i + 6))![0].length : 4;
    if (hex < 4) return wrongAt(i + 2 + hex);
    if (escaped !== 'u' && !'"\\/bfnrt'.includes(escaped)) return wrongAt(i + 1);
    i += escaped === 'u' ? 5 : 1;
  }
  return wrongAt(text.length);
}
