import { describe, expect, it } from 'vitest';
import { MASK, SecretMask } from './mask.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

describe('masking credential values in output', () => {
  it('masks every whole value in a text, the longest first', () => {
    const mask = new SecretMask([SECRET, 'AKIAIOSFODNN7EXAMPLE', 'K7MDENG']);
    expect(mask.text(`key=${SECRET} id=AKIAIOSFODNN7EXAMPLE again ${SECRET}\n`)).toBe(`key=${MASK} id=${MASK} again ${MASK}\n`);
  });

  it('leaves values too short to be secrets alone', () => {
    expect(new SecretMask(['eu', '12345']).text('eu-west-1 12345')).toBe('eu-west-1 12345');
  });

  it('masks a value split across chunks, showing none of it before it is complete', () => {
    const mask = new SecretMask([SECRET]);
    const shown = [mask.push('line one\nkey=wJalrX'), mask.push('UtnFEMI/K7MDENG/bPxRf'), mask.push('iCYEXAMPLEKEY done\nw'), mask.push('ords\n'), mask.end()];
    // Nothing of the secret is shown before the chunk that completes it.
    expect(shown.slice(0, 2).join('')).toBe('line one\nkey=');
    expect(shown.join('')).toBe(`line one\nkey=${MASK} done\nwords\n`);
  });

  it('masks any piece of ten characters or more of a value: one cut by head -c, or by the output limit', () => {
    const mask = new SecretMask([SECRET]);
    expect(mask.text(`a ${SECRET.slice(0, 20)}\nb ${SECRET.slice(5, 15)} c ${SECRET.slice(30)}`)).toBe(`a ${MASK}\nb ${MASK} c ${MASK}`);
    expect(mask.push(`x ${SECRET.slice(0, 12)}`)).toBe('x ');
    expect(mask.end()).toBe(MASK);
    // Nine characters of it are not a piece: too short to say anything, and common words would match.
    expect(mask.text(SECRET.slice(0, 9))).toBe(SECRET.slice(0, 9));
  });

  it('holds back only the last nine characters of plain output until the next chunk or the end', () => {
    const mask = new SecretMask([SECRET]);
    expect(mask.push('plain text ending in z')).toBe('plain text en');
    expect(mask.push(' and more')).toBe('ding in z');
    expect(mask.end()).toBe(' and more');
  });

  it('masks a piece split across chunks', () => {
    const mask = new SecretMask([SECRET]);
    const shown = [mask.push(`tail ${SECRET.slice(10, 17)}`), mask.push(`${SECRET.slice(17, 25)} end\n`), mask.end()];
    expect(shown.join('')).toBe(`tail ${MASK} end\n`);
  });
});
