import { describe, expect, it } from 'vitest';
import { table } from './table.js';

describe('table', () => {
  it('aligns every column to its widest cell, header included, two spaces apart, no trailing spaces', () => {
    const printed = table(['ID', 'NAME', 'LAST EVENT'], [
      ['0190a', 'restart nginx', 'accepted 2024-05-01T08:00:00.000Z'],
      ['0190b', 'db', 'never'],
    ]);
    expect(printed).toBe([
      'ID     NAME           LAST EVENT',
      '0190a  restart nginx  accepted 2024-05-01T08:00:00.000Z',
      '0190b  db             never',
    ].join('\n'));
  });

  it('prints the header alone for no rows, or what the command suggests instead', () => {
    expect(table(['ID', 'NAME'], [])).toBe('ID  NAME');
    expect(table(['ID', 'NAME'], [], 'no channels yet: npx pitcrew channels create --help')).toBe('no channels yet: npx pitcrew channels create --help');
  });

  it('keeps a row on one line, and counts characters rather than UTF-16 units', () => {
    expect(table(['NAME', 'STATE'], [['disk\nfull', 'ok'], ['🔥 hot', 'failed']])).toBe([
      'NAME       STATE',
      'disk full  ok',
      '🔥 hot      failed',
    ].join('\n'));
  });
});
