import { describe, expect, it } from 'vitest';
import { inUseBy } from './in-use.js';

describe('inUseBy', () => {
  const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, name: `rule ${i + 1}` }));

  it('names the one rule, and calls it "it"', () => {
    expect(inUseBy(rules(1))).toEqual({ rules: 'rule "rule 1"', them: 'it' });
  });

  it('counts several and names them all up to five', () => {
    expect(inUseBy(rules(2))).toEqual({ rules: '2 rules: "rule 1", "rule 2"', them: 'them' });
    expect(inUseBy(rules(5))).toEqual({ rules: '5 rules: "rule 1", "rule 2", "rule 3", "rule 4", "rule 5"', them: 'them' });
  });

  it('names the first five of more, and says there are others', () => {
    expect(inUseBy(rules(7))).toEqual({ rules: '7 rules: "rule 1", "rule 2", "rule 3", "rule 4", "rule 5", …', them: 'them' });
  });
});
