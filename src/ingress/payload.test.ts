import { describe, expect, it } from 'vitest';
import { ENV_REFUSAL_TEXT, envEntryBytes, MAX_ENV_BYTES, MAX_ENV_ENTRY_BYTES, MAX_ENV_VARIABLES, refusalForName } from './env.js';
import { MAX_SKIPPED_LISTED } from '../ingest/alert.js';
import type { AlertPayload } from '../ingest/alert.js';
import { parseAlertPayload } from './payload.js';

function parsed(body: unknown): AlertPayload {
  const result = parseAlertPayload(body);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(body)} to parse, got ${JSON.stringify(result.errors)}`);
  return result.payload;
}

function skippedReasons(body: unknown): Record<string, string> {
  return Object.fromEntries(parsed(body).skippedEnv.map((s) => [s.name, s.reason]));
}

describe('parseAlertPayload: fields', () => {
  it('reads every documented body field', () => {
    const body = { HostName: 'web-1', AppName: 'shop', AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', Act: true, MetaData: { Key1: 'Value1' } };
    const payload = parsed(body);
    expect(payload).toMatchObject({ raw: body, hostName: 'web-1', appName: 'shop', alarmName: 'disk_full', severity: 'critical', source: 'nagios', act: true });
    expect(payload.env).toEqual({ HostName: 'web-1', AppName: 'shop', AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', Act: 'true', Key1: 'Value1' });
    expect(payload.skippedEnv).toEqual([]);
  });

  it.each([undefined, null, {}])('treats %j as an empty payload that acts', (body) => {
    expect(parsed(body)).toEqual({
      raw: {}, hostName: undefined, appName: undefined, alarmName: undefined, severity: undefined, source: undefined, act: true, env: {}, skippedEnv: [],
    });
  });

  it('reads Act: false as a dry run, and anything absent as acting', () => {
    expect(parsed({ Act: false }).act).toBe(false);
    expect(parsed({ Act: true }).act).toBe(true);
    expect(parsed({ HostName: 'x' }).act).toBe(true);
  });

  it('reads the older lowercase aliases and exports them under both names', () => {
    const payload = parsed({ hostname: 'db-2', application: 'billing' });
    expect(payload).toMatchObject({ hostName: 'db-2', appName: 'billing' });
    expect(payload.env).toEqual({ hostname: 'db-2', application: 'billing', HostName: 'db-2', AppName: 'billing' });
  });

  it('prefers HostName and AppName over their aliases', () => {
    const payload = parsed({ hostname: 'alias-host', HostName: 'web-9', application: 'alias-app', AppName: 'shop' });
    expect(payload).toMatchObject({ hostName: 'web-9', appName: 'shop' });
    expect(payload.env).toMatchObject({ HostName: 'web-9', AppName: 'shop', hostname: 'alias-host', application: 'alias-app' });
  });

  it('reads numbers and booleans in the text fields as their string form, for matching and for the environment', () => {
    const body = { HostName: 12345, AppName: true, AlarmName: 7.5, Severity: 4, Source: false };
    const payload = parsed(body);
    expect(payload).toMatchObject({ raw: body, hostName: '12345', appName: 'true', alarmName: '7.5', severity: '4', source: 'false', act: true });
    expect(payload.env).toEqual({ HostName: '12345', AppName: 'true', AlarmName: '7.5', Severity: '4', Source: 'false' });
    expect(parsed({ Severity: true }).severity).toBe('true');
  });

  it('reads the older aliases as their string form too, under both names', () => {
    const payload = parsed({ hostname: 12345, application: 9 });
    expect(payload).toMatchObject({ hostName: '12345', appName: '9' });
    expect(payload.env).toEqual({ hostname: '12345', application: '9', HostName: '12345', AppName: '9' });
  });

  it('treats a known field sent as null as absent: no value, no variable, and the alias stands in', () => {
    const payload = parsed({ HostName: null, hostname: 'db-2', AppName: null, AlarmName: null, Severity: null, Source: null, State: null, Other: null });
    expect(payload).toMatchObject({ hostName: 'db-2', appName: undefined, alarmName: undefined, severity: undefined, source: undefined, alarmState: undefined, act: true });
    // Unknown fields keep the environment rule: null is an empty string.
    expect(payload.env).toEqual({ hostname: 'db-2', HostName: 'db-2', Other: '' });
    expect(payload.skippedEnv).toEqual([]);
    expect(parsed({ hostname: null, application: null }).env).toEqual({});
  });

  it.each([
    ['false', false], ['true', true], ['FALSE', false], [' True ', true],
  ])('reads Act sent as the string %j as %s', (act, expected) => {
    const payload = parsed({ Act: act });
    expect(payload.act).toBe(expected);
    expect(payload.env.Act).toBe(act);
  });

  it.each([
    [{ HostName: ['a'] }, '/body/HostName', 'an array'],
    [{ hostname: ['a'] }, '/body/hostname', 'an array'],
    [{ AppName: {} }, '/body/AppName', 'an object'],
    [{ application: { a: 1 } }, '/body/application', 'an object'],
    [{ AlarmName: [] }, '/body/AlarmName', 'an array'],
    [{ Severity: { level: 3 } }, '/body/Severity', 'an object'],
    [{ Source: [1] }, '/body/Source', 'an array'],
    [{ State: {} }, '/body/State', 'an object'],
    [{ Act: 'yes' }, '/body/Act', 'string "yes"'],
    [{ Act: '' }, '/body/Act', 'string ""'],
    [{ Act: '0' }, '/body/Act', 'string "0"'],
    [{ Act: 'constructor' }, '/body/Act', 'string "constructor"'],
    [{ Act: 0 }, '/body/Act', 'number 0'],
    [{ Act: null }, '/body/Act', 'null'],
    [{ MetaData: ['a'] }, '/body/MetaData', 'an array'],
    [{ MetaData: 'k=v' }, '/body/MetaData', 'string "k=v"'],
    [{ MetaData: null }, '/body/MetaData', 'null'],
  ])('refuses %j at its field, saying what it got', (body, path, got) => {
    const result = parseAlertPayload(body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.path).toBe(path);
    expect(result.errors[0]!.message).toContain(`got ${got}`);
  });

  it.each([
    [{ State: 'firing' }, 'firing'],
    [{ State: 'ALARM' }, 'firing'],
    [{ state: 'Problem' }, 'firing'],
    [{ status: ' alarm ' }, 'firing'],
    [{ State: 'Resolved' }, 'resolved'],
    [{ state: 'ok' }, 'resolved'],
    [{ status: 'OK' }, 'resolved'],
    [{ State: 'RECOVERY' }, 'resolved'],
    [{ State: 'ok', state: 'alarm', status: 'firing' }, 'resolved'],
    [{ state: 'alarm', status: 'ok' }, 'firing'],
    [{ State: 'unknown' }, undefined],
    [{ status: 3 }, undefined],
    [{ State: null, state: 'ok' }, 'resolved'],
    [{ State: 1, state: 'alarm' }, undefined],
    [{ State: 'constructor' }, undefined],
    [{ status: '__proto__' }, undefined],
    [{}, undefined],
  ])('reads the alarm state of %j as %s', (body, alarmState) => {
    expect(parsed(body).alarmState).toBe(alarmState);
  });

  it.each([[['a']], ['text'], [42], [true]])('refuses a body that is not an object: %j', (body) => {
    expect(parseAlertPayload(body)).toEqual({ ok: false, errors: [{ path: '/body', message: expect.stringMatching(/JSON object/) }] });
  });

  it('reports every wrong field at once', () => {
    const result = parseAlertPayload({ HostName: [1], Act: 'yes', MetaData: [] });
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual(['/body/HostName', '/body/Act', '/body/MetaData']);
  });

  // The payload's host is a column, an index entry and a lookup key: PostgreSQL refuses a NUL in
  // text and an index entry past ~2,700 bytes, which failed every call sharing the commit.
  it.each([
    [{ HostName: 'web\u00001' }, '/body/HostName', 'HostName must not contain a NUL character (\\u0000)'],
    [{ hostname: 'h'.repeat(256) }, '/body/hostname', 'hostname is 256 characters long; a host name has at most 255'],
  ])('refuses a host name that cannot name a host: %#', (body, path, message) => {
    expect(parseAlertPayload(body)).toEqual({ ok: false, errors: [{ path, message }] });
  });

  it('takes a host name of 255 characters', () => {
    expect(parsed({ HostName: 'h'.repeat(255) }).hostName).toHaveLength(255);
  });
});

describe('parseAlertPayload: runbook environment', () => {
  it('exports top-level scalars and MetaData pairs as strings', () => {
    const payload = parsed({ Count: 3, Ratio: 0.5, Flag: false, Nothing: null, Text: 'a b "c"', MetaData: { Port: 8080, On: true, Empty: null, Key: 'v' } });
    expect(payload.env).toEqual({ Count: '3', Ratio: '0.5', Flag: 'false', Nothing: '', Text: 'a b "c"', Port: '8080', On: 'true', Empty: '', Key: 'v' });
    expect(payload.skippedEnv).toEqual([]);
  });

  it('never exports MetaData itself', () => {
    expect(parsed({ MetaData: {} }).env).toEqual({});
  });

  it('skips objects and arrays, at the top level and inside MetaData', () => {
    const reasons = skippedReasons({ Nested: { a: 1 }, List: [1], MetaData: { Deep: [1], Obj: {} } });
    expect(reasons).toEqual({ Nested: ENV_REFUSAL_TEXT.not_scalar, List: ENV_REFUSAL_TEXT.not_scalar, Deep: ENV_REFUSAL_TEXT.not_scalar, Obj: ENV_REFUSAL_TEXT.not_scalar });
  });

  it('skips values holding a NUL character, wherever they come from', () => {
    // A host name with a NUL is refused whole (below); an alias's canonical name is checked like any other.
    const payload = parsed({ Top: 'a\u0000b', application: 'shop\u0000', MetaData: { Meta: '\u0000' } });
    expect(payload.skippedEnv.map((s) => s.name).sort()).toEqual(['AppName', 'Meta', 'Top', 'application']);
    for (const s of payload.skippedEnv) expect(s.reason).toBe(ENV_REFUSAL_TEXT.nul_character);
    for (const value of Object.values(payload.env)) expect(value).not.toContain('\u0000');
  });

  it('keeps the top-level value when MetaData repeats a name', () => {
    const payload = parsed({ HostName: 'web-1', Severity: 'critical', MetaData: { HostName: 'other', Severity: 'low', Key: 'v' } });
    expect(payload.env).toEqual({ HostName: 'web-1', Severity: 'critical', Key: 'v' });
    expect(payload.skippedEnv).toEqual([
      { name: 'HostName', reason: ENV_REFUSAL_TEXT.duplicate },
      { name: 'Severity', reason: ENV_REFUSAL_TEXT.duplicate },
    ]);
  });

  it('treats the alias-given HostName as set when MetaData repeats it', () => {
    const payload = parsed({ hostname: 'db-2', MetaData: { HostName: 'other' } });
    expect(payload.env.HostName).toBe('db-2');
    expect(skippedReasons({ hostname: 'db-2', MetaData: { HostName: 'other' } })).toEqual({ HostName: ENV_REFUSAL_TEXT.duplicate });
  });

  it('checks names from MetaData like top-level names', () => {
    const reasons = skippedReasons({ MetaData: { PATH: '/tmp', LD_PRELOAD: 'x.so', 'bad-name': 'x', '9lives': 'x', Fine_1: 'ok' } });
    expect(reasons).toEqual({
      PATH: ENV_REFUSAL_TEXT.reserved, LD_PRELOAD: ENV_REFUSAL_TEXT.reserved, 'bad-name': ENV_REFUSAL_TEXT.invalid_name, '9lives': ENV_REFUSAL_TEXT.invalid_name,
    });
  });

  it(`exports at most ${MAX_ENV_VARIABLES} variables and names the rest`, () => {
    const meta = Object.fromEntries(Array.from({ length: MAX_ENV_VARIABLES + 5 }, (_, i) => [`V${i}`, i]));
    const payload = parsed({ HostName: 'web-1', MetaData: meta });
    expect(Object.keys(payload.env)).toHaveLength(MAX_ENV_VARIABLES);
    expect(payload.env.HostName).toBe('web-1');
    expect(payload.env[`V${MAX_ENV_VARIABLES - 2}`]).toBe(String(MAX_ENV_VARIABLES - 2));
    expect(payload.skippedEnv.map((s) => s.name)).toEqual([MAX_ENV_VARIABLES - 1, MAX_ENV_VARIABLES, MAX_ENV_VARIABLES + 1, MAX_ENV_VARIABLES + 2, MAX_ENV_VARIABLES + 3, MAX_ENV_VARIABLES + 4].map((i) => `V${i}`));
    for (const s of payload.skippedEnv) expect(s.reason).toBe(ENV_REFUSAL_TEXT.too_many);
  });

  it('leaves out a value longer than the kernel passes in one variable, and keeps the others', () => {
    // "Big=" + value + NUL: one byte over 128 KiB is refused, the longest that fits is exported.
    const over = 'x'.repeat(MAX_ENV_ENTRY_BYTES - 'Big='.length);
    const fits = 'y'.repeat(MAX_ENV_ENTRY_BYTES - 'Fit='.length - 1);
    const payload = parsed({ HostName: 'web-1', MetaData: { Big: over, Fit: fits, Small: 'ok' } });
    expect(payload.env).toEqual({ HostName: 'web-1', Fit: fits, Small: 'ok' });
    expect(payload.skippedEnv).toEqual([{ name: 'Big', reason: ENV_REFUSAL_TEXT.too_long }]);
    expect(payload.raw).toMatchObject({ MetaData: { Big: over } });
  });

  it(`stops exporting once the variables fill ${MAX_ENV_BYTES / 1024 / 1024} MiB, and names the rest`, () => {
    const value = 'v'.repeat(100 * 1024);
    const meta = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`Part${i}`, value]));
    const payload = parsed({ MetaData: { ...meta, Small: 'ok' } });
    const exported = Object.keys(payload.env);
    expect(exported).toEqual([...Array.from({ length: 10 }, (_, i) => `Part${i}`), 'Small']);
    expect(exported.reduce((sum, name) => sum + envEntryBytes(name, payload.env[name]!), 0)).toBeLessThanOrEqual(MAX_ENV_BYTES);
    expect(payload.skippedEnv).toEqual([{ name: 'Part10', reason: ENV_REFUSAL_TEXT.env_full }, { name: 'Part11', reason: ENV_REFUSAL_TEXT.env_full }]);
  });

  it('counts an alias-given HostName within the cap', () => {
    const meta = Object.fromEntries(Array.from({ length: MAX_ENV_VARIABLES }, (_, i) => [`V${i}`, i]));
    const payload = parsed({ hostname: 'db-2', MetaData: meta });
    expect(Object.keys(payload.env).length).toBeLessThanOrEqual(MAX_ENV_VARIABLES);
  });

  it(`lists the first ${MAX_SKIPPED_LISTED} skipped names and counts the rest in one entry, so a body cannot grow tenfold`, () => {
    const meta = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k-${i}`, 1]));
    const { skippedEnv, raw } = parsed({ 'a-b': 'top', MetaData: meta });
    expect(skippedEnv).toHaveLength(MAX_SKIPPED_LISTED + 1);
    expect(skippedEnv.slice(0, 3)).toEqual([{ name: 'a-b', reason: ENV_REFUSAL_TEXT.invalid_name }, { name: 'k-0', reason: ENV_REFUSAL_TEXT.invalid_name }, { name: 'k-1', reason: ENV_REFUSAL_TEXT.invalid_name }]);
    expect(skippedEnv[MAX_SKIPPED_LISTED - 1]!.name).toBe(`k-${MAX_SKIPPED_LISTED - 2}`);
    expect(skippedEnv[MAX_SKIPPED_LISTED]).toEqual({ name: '…', reason: '4901 more names were not exported either; only the first 100 are listed (the event keeps the whole payload)' });
    expect(JSON.stringify(skippedEnv).length).toBeLessThan(JSON.stringify(raw).length);
    // Exactly the listed number: no summary entry.
    expect(parsed({ MetaData: Object.fromEntries(Array.from({ length: MAX_SKIPPED_LISTED }, (_, i) => [`k-${i}`, 1])) }).skippedEnv.map((s) => s.name)).not.toContain('…');
  });

  it('refused names do not count against the cap', () => {
    const meta = Object.fromEntries(Array.from({ length: MAX_ENV_VARIABLES }, (_, i) => [`V${i}`, i]));
    const payload = parsed({ PATH: 'x', 'a-b': 'y', Obj: {}, MetaData: meta });
    expect(Object.keys(payload.env)).toHaveLength(MAX_ENV_VARIABLES);
    expect(payload.skippedEnv.map((s) => s.name)).toEqual(['PATH', 'a-b', 'Obj']);
  });
});

describe('refusalForName', () => {
  it.each([
    'PATH', 'HOME', 'SHELL', 'USER', 'IFS', 'ENV', 'BASH_ENV', 'CDPATH', 'PS4', 'PROMPT_COMMAND', 'TMPDIR', 'LANG',
    'NODE_OPTIONS', 'PYTHONPATH', 'PERL5OPT', 'RUBYOPT', 'http_proxy', 'HTTPS_PROXY', 'SSL_CERT_FILE', 'GCONV_PATH', 'EDITOR',
  ])('reserves %s', (name) => {
    expect(refusalForName(name)).toBe('reserved');
  });

  it.each(['PITCREW_RULE', 'PITCREW_', 'PITCREW_EXECUTION_ID'])('keeps %s for the service, saying so', (name) => expect(refusalForName(name)).toBe('pitcrew_context'));

  it.each(['LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_', 'DYLD_INSERT_LIBRARIES', 'LC_ALL', 'LC_CTYPE', 'GLIBC_TUNABLES', 'GIT_DIR', 'BASH_FUNC_x'])(
    'reserves %s by its prefix',
    (name) => expect(refusalForName(name)).toBe('reserved'),
  );

  it.each(['1abc', '9', 'bad-name', 'a b', 'a.b', 'a=b', '', 'é', 'BASH_FUNC_x%%', '$HOME', 'a\u0000b'])('refuses %j as not a shell identifier', (name) => {
    expect(refusalForName(name)).toBe('invalid_name');
  });

  it.each(['HostName', 'Key1', '_', '_x', 'a1', 'MY_PATH', 'PATH_INFO', 'LDAP_HOST', 'LOCAL', 'PITCREWISH', 'path', 'home'])('allows %s', (name) => {
    expect(refusalForName(name)).toBeUndefined();
  });
});
