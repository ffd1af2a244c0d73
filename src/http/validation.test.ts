import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compileBodyCheck } from './validation.js';

const Limit = Type.Object({ max: Type.Integer({ minimum: 1 }), windowSeconds: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
const check = compileBodyCheck(Type.Object({
  actionLimit: Type.Optional(Type.Union([Limit, Type.Null()])),
  label: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
  tags: Type.Optional(Type.Array(Type.String())),
}, { additionalProperties: false }));

describe('validation messages for unions', () => {
  it('say what is wrong inside the branch the value took, not that it should have been null', () => {
    expect(check({ actionLimit: { max: 0, windowSeconds: 60 } })).toEqual([{ path: '/body/actionLimit/max', message: 'must be >= 1' }]);
    expect(check({ actionLimit: { max: 1 } })).toEqual([{ path: '/body/actionLimit/windowSeconds', message: 'is required' }]);
    expect(check({ actionLimit: { max: 1, windowSeconds: 1, per: 'host' } })).toEqual([{ path: '/body/actionLimit/per', message: 'is not a known field; remove it or check its spelling' }]);
  });

  it('name every type a value of no branch could have had, in one message', () => {
    expect(check({ actionLimit: 3 })).toEqual([{ path: '/body/actionLimit', message: 'must be object or null' }]);
    expect(check({ label: 5 })).toEqual([{ path: '/body/label', message: 'must be string or null' }]);
    expect(check({ value: { nested: true } })).toEqual([{ path: '/body/value', message: 'must be string, number, boolean or null' }]);
  });

  it('keep the errors of plain fields as they were', () => {
    expect(check({ tags: ['a', 2] })).toEqual([{ path: '/body/tags/1', message: 'must be string' }]);
    expect(check({ actionLimit: null, label: null, value: null })).toEqual([]);
  });
});
