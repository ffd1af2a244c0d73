import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

/*
 * A Slack workspace with one app installed, as pitcrew sees it, built from Slack's documentation:
 *
 * - Web API (docs.slack.dev/apis/web-api): the bot token in `Authorization: Bearer xoxb-…`
 *   (docs.slack.dev/authentication/tokens); a missing one answers {"ok":false,"error":"not_authed"},
 *   a wrong one "invalid_auth", always HTTP 200 with `ok`.
 *   - chat.postMessage (docs.slack.dev/reference/methods/chat.postMessage): JSON body
 *     (application/json; charset=utf-8), `channel` and `text` and/or `blocks`; answers
 *     {ok, channel, ts, message}. channel_not_found for a channel the workspace lacks,
 *     not_in_channel for one the app was not invited to, invalid_blocks for Block Kit it refuses.
 *   - chat.update (docs.slack.dev/reference/methods/chat.update): channel, ts, text, blocks;
 *     message_not_found for a ts that is not there; answers {ok, channel, ts, text}.
 *   - users.info (docs.slack.dev/reference/methods/users.info): GET ?user=U…; the e-mail is in
 *     user.profile.email only with users:read.email; user_not_found otherwise.
 * - response_url (docs.slack.dev/interactivity/handling-user-interaction, "Message responses"):
 *   a JSON POST, answered 200 "ok"; `replace_original: true` replaces the message clicked,
 *   `response_type: "ephemeral"` shows a message to the clicker only.
 * - Interactivity (docs.slack.dev/reference/interaction-payloads/block_actions-payload): a click
 *   is POSTed as application/x-www-form-urlencoded `payload=<JSON>`, signed as Slack signs
 *   (docs.slack.dev/authentication/verifying-requests-from-slack): X-Slack-Request-Timestamp, and
 *   X-Slack-Signature "v0=" + hex HMAC-SHA256(signing secret, "v0:{timestamp}:{raw body}").
 */

export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: Array<Record<string, unknown>>;
  /** Each chat.update applied to it, in order, and each response_url replace_original. */
  versions: Array<{ via: 'chat.update' | 'response_url'; text: string; blocks: Array<Record<string, unknown>> }>;
}

export interface SlackCall {
  method: string;
  authorization: string | undefined;
  contentType: string | undefined;
  raw: string;
}

export interface Ephemeral {
  responseUrl: string;
  text: string;
}

export interface SlackEmulator {
  /** The Web API's base, for PITCREW_SLACK_API_URL. */
  apiUrl: string;
  botToken: string;
  signingSecret: string;
  /** The channel the app is in. */
  channelId: string;
  teamId: string;
  appId: string;
  messages: SlackMessage[];
  calls: SlackCall[];
  /** What reached a response_url as an ephemeral answer. */
  ephemerals: Ephemeral[];
  /** A member of the workspace; their e-mail shows in users.info. */
  addUser(id: string, email: string | null): void;
  /** Holds users.info's answers until the function returned is called (a click being decided, frozen). */
  holdUsersInfo(): () => void;
  /** The request Slack sends when `userId` clicks the button `actionId` of `message`. */
  click(message: SlackMessage, userId: string, actionId: string, value: string, options?: { timestamp?: number; signingSecret?: string }): SignedClick;
  close(): Promise<void>;
}

export interface SignedClick {
  headers: Record<string, string>;
  body: string;
  responseUrl: string;
}

const open = new Set<SlackEmulator>();
afterAll(async () => {
  await Promise.all([...open].map((s) => s.close()));
});

type Json = Record<string, unknown>;

export async function startSlackEmulator(): Promise<SlackEmulator> {
  const botToken = `xoxb-1111111111-2222222222-${Math.random().toString(36).slice(2, 14)}`;
  const signingSecret = createHmac('sha256', String(Math.random())).digest('hex').slice(0, 32);
  const channelId = 'C0APPROVALS';
  const users = new Map<string, string | null>();
  const messages: SlackMessage[] = [];
  const calls: SlackCall[] = [];
  const ephemerals: Ephemeral[] = [];
  let sequence = 0;
  let responses = 0;
  let held: Array<() => void> | null = null;

  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://slack.test');
      const send = (status: number, body: unknown, type = 'application/json; charset=utf-8') => {
        response.writeHead(status, { 'content-type': type });
        response.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      if (url.pathname.startsWith('/actions/')) return send(200, respond(url.pathname, raw), 'text/plain');
      const method = url.pathname.replace(/^\/api\//, '');
      calls.push({ method, authorization: request.headers.authorization, contentType: request.headers['content-type'], raw });
      const auth = request.headers.authorization;
      if (!auth) return send(200, { ok: false, error: 'not_authed' });
      if (auth !== `Bearer ${botToken}`) return send(200, { ok: false, error: 'invalid_auth' });
      if (method === 'users.info') {
        const answer = () => send(200, usersInfo(request.method, url.searchParams.get('user')));
        return held ? void held.push(answer) : answer();
      }
      if (request.method !== 'POST' || !/^application\/json/.test(request.headers['content-type'] ?? '')) return send(200, { ok: false, error: 'invalid_arguments' });
      const body = JSON.parse(raw) as Json;
      if (method === 'chat.postMessage') return send(200, postMessage(body));
      if (method === 'chat.update') return send(200, update(body));
      return send(404, { ok: false, error: 'unknown_method' });
    });
  });

  function usersInfo(method: string | undefined, user: string | null): Json {
    if (method !== 'GET' && method !== 'POST') return { ok: false, error: 'invalid_arguments' };
    if (!user || !users.has(user)) return { ok: false, error: 'user_not_found' };
    const email = users.get(user);
    return { ok: true, user: { id: user, team_id: 'T0PITCREW', name: user.toLowerCase(), deleted: false, profile: { real_name: user, display_name: user, ...(email ? { email } : {}) } } };
  }

  function postMessage(body: Json): Json {
    if (typeof body.channel !== 'string') return { ok: false, error: 'channel_not_found' };
    if (body.channel !== channelId) return { ok: false, error: body.channel.startsWith('C') ? 'not_in_channel' : 'channel_not_found' };
    const problem = blocksProblem(body);
    if (problem) return { ok: false, error: 'invalid_blocks', errors: [problem] };
    sequence += 1;
    const ts = `${Math.floor(Date.now() / 1000)}.${String(sequence).padStart(6, '0')}`;
    const message: SlackMessage = { channel: channelId, ts, text: String(body.text ?? ''), blocks: (body.blocks as Json[]) ?? [], versions: [] };
    messages.push(message);
    return { ok: true, channel: channelId, ts, message: { type: 'message', text: message.text, blocks: message.blocks, ts } };
  }

  function update(body: Json): Json {
    const message = messages.find((m) => m.channel === body.channel && m.ts === body.ts);
    if (!message) return { ok: false, error: body.channel === channelId ? 'message_not_found' : 'channel_not_found' };
    const problem = blocksProblem(body);
    if (problem) return { ok: false, error: 'invalid_blocks', errors: [problem] };
    message.text = String(body.text ?? message.text);
    message.blocks = (body.blocks as Json[]) ?? message.blocks;
    message.versions.push({ via: 'chat.update', text: message.text, blocks: message.blocks });
    return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
  }

  function respond(path: string, raw: string): string {
    const ts = decodeURIComponent(path.split('/')[3] ?? '');
    const body = JSON.parse(raw) as Json;
    const message = messages.find((m) => m.ts === ts);
    if (body.replace_original === true && message) {
      message.text = String(body.text ?? '');
      message.blocks = (body.blocks as Json[]) ?? [];
      message.versions.push({ via: 'response_url', text: message.text, blocks: message.blocks });
    } else {
      ephemerals.push({ responseUrl: path, text: String(body.text ?? '') });
    }
    return 'ok';
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const emulator: SlackEmulator = {
    apiUrl: `${base}/api`, botToken, signingSecret, channelId, teamId: 'T0PITCREW', appId: 'A0PITCREW', messages, calls, ephemerals,
    addUser: (id, email) => users.set(id, email),
    holdUsersInfo: () => {
      held = [];
      return () => {
        const answers = held ?? [];
        held = null;
        for (const answer of answers) answer();
      };
    },
    click: (message, userId, actionId, value, options = {}) => {
      responses += 1;
      const responseUrl = `${base}/actions/T0PITCREW/${encodeURIComponent(message.ts)}/${responses}`;
      const action = findAction(message, actionId, value);
      const payload = {
        type: 'block_actions',
        user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: 'T0PITCREW' },
        api_app_id: 'A0PITCREW',
        token: 'verification-token-deprecated',
        container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
        trigger_id: `${responses}.trigger`,
        team: { id: 'T0PITCREW', domain: 'pitcrew-test' },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: message.channel, name: 'approvals' },
        message: { type: 'message', ts: message.ts, text: message.text, blocks: message.blocks },
        response_url: responseUrl,
        actions: [{ ...action, action_ts: `${Date.now() / 1000}` }],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', options.signingSecret ?? signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      return { headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature }, body, responseUrl };
    },
    close: () => new Promise((resolve) => {
      open.delete(emulator);
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  open.add(emulator);
  return emulator;
}

/** The button as Slack echoes it in block_actions: action_id, block_id, value, type, text. */
function findAction(message: SlackMessage, actionId: string, value: string): Json {
  for (const block of message.blocks) {
    for (const element of (block.elements as Json[] | undefined) ?? []) {
      if (element.action_id === actionId && element.value === value) return { action_id: actionId, block_id: block.block_id, value, type: 'button', text: element.text, style: element.style };
    }
  }
  // A button no longer on the message (a stale client): Slack still sends what was clicked.
  return { action_id: actionId, block_id: `pitcrew:${value}`, value, type: 'button', text: { type: 'plain_text', text: actionId } };
}

const isText = (value: unknown, max: number) => typeof value === 'string' && value.length > 0 && value.length <= max;
const plain = (value: unknown, max: number) => (value as Json | undefined)?.type === 'plain_text' && isText((value as Json).text, max);

/**
 * Block Kit as Slack checks it (docs.slack.dev/reference/block-kit/blocks; block elements): ≤ 50
 * blocks, block_id ≤ 255 and unique; header plain_text ≤ 150; section text ≤ 3000, ≤ 10 fields of
 * ≤ 2000; actions ≤ 25 elements; a button's text plain_text ≤ 75, action_id ≤ 255 and unique in
 * the message, value ≤ 2000, url ≤ 3000, style primary or danger, a confirm dialog of plain_text
 * title ≤ 100, text ≤ 300, confirm and deny ≤ 30.
 */
function blocksProblem(body: Json): string | undefined {
  if (body.blocks === undefined) return isText(body.text, 40_000) ? undefined : 'no_text';
  const blocks = body.blocks as Json[];
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) return '1 to 50 blocks';
  const blockIds = new Set<string>();
  for (const block of blocks) {
    if (block.block_id !== undefined) {
      if (!isText(block.block_id, 255) || blockIds.has(String(block.block_id))) return 'block_id must be unique, at most 255 characters';
      blockIds.add(String(block.block_id));
    }
    switch (block.type) {
      case 'header':
        if (!plain(block.text, 150)) return 'header is plain_text of at most 150';
        break;
      case 'section': {
        const text = block.text as Json | undefined;
        const fields = block.fields as Json[] | undefined;
        if (!text && !fields) return 'a section needs text or fields';
        if (text && (text.type !== 'mrkdwn' || !isText(text.text, 3000))) return 'section text at most 3000';
        if (fields && (fields.length > 10 || fields.some((f) => !isText(f.text, 2000)))) return 'at most 10 fields of 2000';
        break;
      }
      case 'actions': {
        const elements = block.elements as Json[];
        if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25) return 'actions hold 1 to 25 elements';
        const actionIds = new Set<string>();
        for (const e of elements) {
          const problem = buttonProblem(e, actionIds);
          if (problem) return problem;
        }
        break;
      }
      case 'context':
        break;
      default:
        return `unknown block type ${String(block.type)}`;
    }
  }
  return undefined;
}

function buttonProblem(e: Json, actionIds: Set<string>): string | undefined {
  if (e.type !== 'button' || !plain(e.text, 75)) return 'a button has plain_text of at most 75';
  if (e.url !== undefined && !isText(e.url, 3000)) return 'button url at most 3000';
  if (e.value !== undefined && !isText(e.value, 2000)) return 'button value at most 2000';
  if (e.style !== undefined && e.style !== 'primary' && e.style !== 'danger') return 'button style is primary or danger';
  if (e.action_id !== undefined) {
    if (!isText(e.action_id, 255)) return 'action_id at most 255';
    if (actionIds.has(String(e.action_id))) return 'action_id must be unique in its block';
    actionIds.add(String(e.action_id));
  }
  const confirm = e.confirm as Json | undefined;
  if (confirm && (!plain(confirm.title, 100) || !plain(confirm.text, 300) || !plain(confirm.confirm, 30) || !plain(confirm.deny, 30))) return 'confirm: title 100, text 300, confirm and deny 30';
  return undefined;
}
