import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, callApiAll, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

const COMMON = 'options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json';

export const USERS_USAGE = `usage: pitcrew users <list|invite|role|remove|reset|reset-second-factor> [options]

  list                                   the tenant's members, their roles and status (all of them, oldest account first)
  invite EMAIL --role ROLE               invite a person (viewer, operator, admin, owner): prints the one-time link
  role ID --role ROLE                    change a member's role
  remove ID                              remove a member: their sessions end, their tokens here stop
  reset ID                               a password reset link for a member (1 hour)
  reset-second-factor ID|EMAIL           remove a member's second factor (they lost their authenticator app):
                                         their sessions end everywhere, they sign in with their password alone

${COMMON}`;

export const TOKENS_USAGE = `usage: pitcrew tokens <list|create|revoke> [options]

  list [--all]                           your personal access tokens, newest first (--all: everyone's, for an admin)
  create --name NAME [--role ROLE] [--expires ISO-TIME]
                                         issue yourself a token, at most your role: shown once
  revoke ID                              the token stops working at once

${COMMON}`;

interface Member { id: string; email: string | null; role: string; status: string; totp: boolean; lastSignInAt: string | null; inviteUrl?: string; emailed?: { detail: string } }
interface TokenView { id: string; name: string; role: string | null; expiresAt: string | null; lastUsedAt: string | null; revokedAt: string | null; token?: string }

const OPTIONS = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, role: { type: 'string' }, name: { type: 'string' }, expires: { type: 'string' }, all: { type: 'boolean' } } as const;

/** `pitcrew users …`: the tenant's members through the API (docs/identity.md). */
export async function runUsers(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const one = (what: string) => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the ${what}\n\n${USERS_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  const role = () => values.role ?? (() => { throw new CliError(`${verb} needs --role ROLE\n\n${USERS_USAGE}`, 2); })();
  switch (verb) {
    case 'list': {
      const page = await callApiAll<Member>(client, '/api/v1/users');
      show(page, table(['ID', 'EMAIL', 'ROLE', 'STATUS', '2FA', 'LAST SIGN-IN'], page.items.map((m) => [m.id, m.email ?? '-', m.role, m.status, m.totp ? 'yes' : 'no', m.lastSignInAt ?? 'never'])));
      return 0;
    }
    case 'invite': {
      const member = (await callApi(client, 'POST', '/api/v1/users', { email: positionals[0] ?? one('e-mail'), role: role() })) as Member;
      show(member, `${member.inviteUrl}\ninvited ${member.email} as ${member.role} (${member.id}): the link works once, for 7 days; ${member.emailed?.detail}`);
      return 0;
    }
    case 'role': {
      const member = (await callApi(client, 'PATCH', `/api/v1/users/${one('user id')}`, { role: role() })) as Member;
      show(member, `${member.email} is now ${member.role}`);
      return 0;
    }
    case 'remove':
      await callApi(client, 'DELETE', `/api/v1/users/${one('user id')}`);
      show({ removed: positionals[0] }, `removed ${positionals[0]} from the tenant`);
      return 0;
    case 'reset': {
      const reset = (await callApi(client, 'POST', `/api/v1/users/${one('user id')}/reset`)) as { resetUrl: string; emailed: { detail: string } };
      show(reset, `${reset.resetUrl}\nthe link works once, for 1 hour; ${reset.emailed.detail}`);
      return 0;
    }
    case 'reset-second-factor': {
      const id = await memberId(client, decodeURIComponent(one('user id or e-mail')));
      const done = (await callApi(client, 'DELETE', `/api/v1/users/${encodeURIComponent(id)}/totp`)) as Member & { sessionsEnded: number; emailed: { detail: string } };
      show(done, `removed the second factor of ${done.email ?? done.id}: they sign in with their password alone, and may set up a new one; ${done.sessionsEnded} session(s) signed out; ${done.emailed.detail}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, USERS_USAGE);
  }
}

/** A member's id, given it or their e-mail (looked up among the tenant's members). */
async function memberId(client: ClientConfig, idOrEmail: string): Promise<string> {
  if (!idOrEmail.includes('@')) return idOrEmail;
  const { items } = await callApiAll<Member>(client, '/api/v1/users');
  const found = items.find((member) => member.email === idOrEmail.trim().toLowerCase());
  if (!found) throw new CliError(`no member of this tenant has the e-mail ${idOrEmail}; \`pitcrew users list\` shows them`);
  return found.id;
}

/** `pitcrew tokens …`: your personal access tokens through the API. */
export async function runTokens(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  switch (verb) {
    case 'list': {
      const page = await callApiAll<TokenView>(client, `/api/v1/tokens${values.all ? '?all=true' : ''}`);
      show(page, table(['ID', 'NAME', 'ROLE', 'EXPIRES', 'LAST USED', 'STATUS'], page.items.map((t) => [t.id, t.name, t.role ?? "user's", t.expiresAt ?? 'never', t.lastUsedAt ?? 'never', t.revokedAt ? 'revoked' : 'active'])));
      return 0;
    }
    case 'create': {
      if (!values.name) throw new CliError(`create needs --name NAME\n\n${TOKENS_USAGE}`, 2);
      const body = { name: values.name, ...(values.role ? { role: values.role } : {}), ...(values.expires ? { expiresAt: values.expires } : {}) };
      const issued = (await callApi(client, 'POST', '/api/v1/tokens', body)) as TokenView;
      show(issued, `${issued.token}\nissued token "${issued.name}" (${issued.id})${issued.role ? `, role ${issued.role}` : ''}: shown once, store it now`);
      return 0;
    }
    case 'revoke':
      if (positionals.length !== 1) throw new CliError(`revoke needs the token id\n\n${TOKENS_USAGE}`, 2);
      await callApi(client, 'DELETE', `/api/v1/tokens/${encodeURIComponent(positionals[0]!)}`);
      show({ revoked: positionals[0] }, `revoked ${positionals[0]}: it stops working at once`);
      return 0;
    default:
      throw unknownSubcommand(verb, TOKENS_USAGE);
  }
}
