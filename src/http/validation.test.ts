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

describe('validation messages for a misspelt field (issue 36)', () => {
  const Action = Type.Object({ type: Type.Literal('script'), flavour: Type.Enum(['autofix', 'diagnostics']), timeoutSeconds: Type.Optional(Type.Integer()) }, { additionalProperties: false });
  const Target = Type.Object({ type: Type.String(), hostname: Type.Optional(Type.String()), tags: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false });
  const checkRule = compileBodyCheck(Type.Object({ action: Action, target: Target }, { additionalProperties: false }));

  it('names the field it was meant to be, first, instead of "is required" of that field', () => {
    expect(checkRule({ action: { type: 'script', flavor: 'autofix' }, target: { type: 'trigger_host' } })).toEqual([
      { path: '/body/action/flavor', message: 'unknown field "flavor"; did you mean "flavour"?' },
    ]);
  });

  it('knows a field written in another case', () => {
    expect(checkRule({ action: { type: 'script', flavour: 'autofix' }, target: { type: 'specific_host', hostName: 'web-1' } })).toEqual([
      { path: '/body/target/hostName', message: 'unknown field "hostName"; did you mean "hostname"?' },
    ]);
  });

  it('puts the misspelt field before the other errors, and guesses nothing for a name close to none', () => {
    expect(checkRule({ action: { type: 'script', timeoutSeconds: 'x', flavor: 'autofix' }, target: { type: 'trigger_host', surprise: 1 } })).toEqual([
      { path: '/body/action/flavor', message: 'unknown field "flavor"; did you mean "flavour"?' },
      { path: '/body/action/timeoutSeconds', message: 'must be integer' },
      { path: '/body/target/surprise', message: 'is not a known field; remove it or check its spelling' },
    ]);
  });
});

describe('validation messages for settings that go together', () => {
  const Bot = Type.Object(
    { webhookUrl: Type.String(), botAppId: Type.Optional(Type.String()), botAppPassword: Type.Optional(Type.String()) },
    { additionalProperties: false, dependencies: { botAppId: ['botAppPassword'], botAppPassword: ['botAppId'] } },
  );
  const checkBot = compileBodyCheck(Type.Object({ config: Bot }, { additionalProperties: false }));

  it('names the missing setting and the one it goes with, not the schema keyword', () => {
    expect(checkBot({ config: { webhookUrl: 'https://x', botAppId: 'a' } })).toEqual([{ path: '/body/config/botAppPassword', message: 'is required with "botAppId"' }]);
    expect(checkBot({ config: { webhookUrl: 'https://x', botAppPassword: 'p' } })).toEqual([{ path: '/body/config/botAppId', message: 'is required with "botAppPassword"' }]);
    expect(checkBot({ config: { webhookUrl: 'https://x', botAppId: 'a', botAppPassword: 'p' } })).toEqual([]);
  });
});
