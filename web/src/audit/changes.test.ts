import { describe, expect, it } from 'vitest';
import { fieldChanges } from './changes';

describe('fieldChanges', () => {
  it('lists the fields that differ by their path, nested objects flattened and lists whole', () => {
    const before = { name: 'disk', enabled: true, target: { hostname: 'web-1' }, tags: ['a'], secret: '***' };
    const after = { name: 'disk', enabled: false, target: { hostname: 'web-2' }, tags: ['a', 'b'], secret: '***' };
    expect(fieldChanges(before, after)).toEqual([
      { path: 'enabled', before: 'true', after: 'false' },
      { path: 'tags', before: '["a"]', after: '["a","b"]' },
      { path: 'target.hostname', before: '"web-1"', after: '"web-2"' },
    ]);
  });

  it('shows a creation as fields that appear and a deletion as fields that go', () => {
    expect(fieldChanges(undefined, { name: 'x' })).toEqual([{ path: 'name', before: undefined, after: '"x"' }]);
    expect(fieldChanges({ name: 'x' }, undefined)).toEqual([{ path: 'name', before: '"x"', after: undefined }]);
  });
});
