import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, unknownSubcommand } from './client.js';

export const CONTACTS_USAGE = `usage: pitcrew escalation-contacts <get|set> [options]

  get                                        who hears escalations and receives email runbooks
  set [--email ADDRESS]... [--channel ID]... [--email-channel ID]
                                             replace them (no --email and no --channel: nobody)

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface Contacts {
  emails: string[];
  channelIds: string[];
  emailChannelId: string | null;
}

/** `pitcrew escalation-contacts …`: GET and PUT /api/v1/escalation-contacts. */
export async function runContacts(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = {
    server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' },
    email: { type: 'string', multiple: true }, channel: { type: 'string', multiple: true }, 'email-channel': { type: 'string' },
  } as const;
  const { values } = parseArgs({ args: rest, options, strict: true });
  const { client } = apiCommand(values, env, out);
  let contacts: Contacts;
  if (verb === 'get') contacts = (await callApi(client, 'GET', '/api/v1/escalation-contacts')) as Contacts;
  else if (verb === 'set') {
    const body = { emails: values.email ?? [], channelIds: values.channel ?? [], emailChannelId: values['email-channel'] ?? null };
    contacts = (await callApi(client, 'PUT', '/api/v1/escalation-contacts', body)) as Contacts;
  } else {
    throw unknownSubcommand(verb, CONTACTS_USAGE);
  }
  out(values.json ? JSON.stringify(contacts, null, 2) : [
    `emails         ${contacts.emails.join(', ') || '-'}`,
    `channels       ${contacts.channelIds.join(', ') || '-'}`,
    `email channel  ${contacts.emailChannelId ?? '(the first email channel)'}`,
  ].join('\n'));
  return 0;
}
