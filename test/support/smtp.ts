import type { AddressInfo } from 'node:net';
import selfsigned from 'selfsigned';
import { SMTPServer } from 'smtp-server';
import { afterAll } from 'vitest';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Whether the session was upgraded with STARTTLS (or was TLS from the start). */
  secure: boolean;
  user: string | undefined;
  raw: string;
  subject: string;
  text: string;
  html: string;
  parts: MimePart[];
}

export interface SmtpTestServer {
  host: string;
  port: number;
  /** The server's self-signed certificate, to give the channel as `ca`. */
  cert: string;
  username: string;
  password: string;
  mails: ReceivedMail[];
  /** Refuses the next `n` mails with a temporary (4xx) error. */
  failNext(n: number): void;
  close(): Promise<void>;
}

const servers = new Set<SmtpTestServer>();
afterAll(async () => {
  await Promise.all([...servers].map((s) => s.close()));
});

/**
 * A real SMTP server in the test process (the smtp-server package): STARTTLS with a self-signed
 * certificate, AUTH PLAIN/LOGIN that only accepts its own credentials, and no AUTH before TLS.
 */
export async function startSmtpServer(): Promise<SmtpTestServer> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  const username = 'pitcrew';
  const password = `smtp-pass-${Math.random().toString(36).slice(2)}`;
  const mails: ReceivedMail[] = [];
  let failing = 0;
  const server = new SMTPServer({
    key: pems.private,
    cert: pems.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // Refuse AUTH on a plain connection (the default): a client must STARTTLS first.
    allowInsecureAuth: false,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === username && auth.password === password) return callback(null, { user: username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (raw += chunk));
      stream.on('end', () => {
        if (failing > 0) {
          failing -= 1;
          return callback(Object.assign(new Error('Temporary local problem, try again'), { responseCode: 451 }));
        }
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
          raw,
          ...parseMime(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  const handle: SmtpTestServer = {
    host: '127.0.0.1',
    port,
    cert: pems.cert,
    username,
    password,
    mails,
    failNext: (n) => {
      failing = n;
    },
    close: () => {
      servers.delete(handle);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  servers.add(handle);
  return handle;
}

/** A leaf part of a mail (multipart bodies opened, nested ones too), its body decoded. */
export interface MimePart {
  contentType: string;
  /** The Content-ID without its angle brackets. */
  contentId: string | undefined;
  disposition: string | undefined;
  body: Buffer;
}

/** Just enough MIME for the tests: the subject, the decoded text and HTML parts, and every leaf part. */
function parseMime(raw: string): { subject: string; text: string; html: string; parts: MimePart[] } {
  const head = unfold(raw.split(/\r?\n\r?\n/)[0] ?? '');
  const subject = decodeWords(/^subject: (.*)$/im.exec(head)?.[1] ?? '');
  const parts = leaves(raw);
  const text = parts.find((part) => part.contentType === 'text/plain')?.body.toString('utf8') ?? '';
  const html = parts.find((part) => part.contentType === 'text/html')?.body.toString('utf8') ?? '';
  return { subject, text, html, parts };
}

function leaves(entity: string): MimePart[] {
  const gap = /\r?\n\r?\n/.exec(entity);
  const head = unfold(gap ? entity.slice(0, gap.index) : entity);
  const body = gap ? entity.slice(gap.index + gap[0].length) : '';
  const contentType = /^content-type: *([^;\r\n]+)/im.exec(head)?.[1]?.trim().toLowerCase() ?? 'text/plain';
  if (contentType.startsWith('multipart/')) {
    const boundary = /boundary="?([^";\r\n]+)"?/i.exec(head)?.[1];
    if (!boundary) return [];
    return body.split(`--${boundary}`).slice(1, -1).flatMap((part) => leaves(part.replace(/^\r?\n/, '')));
  }
  return [{
    contentType,
    contentId: /^content-id: *<([^>]+)>/im.exec(head)?.[1],
    disposition: /^content-disposition: *([^;\r\n]+)/im.exec(head)?.[1]?.trim().toLowerCase(),
    body: decodeBody(body, /^content-transfer-encoding: *(\S+)/im.exec(head)?.[1] ?? '7bit'),
  }];
}

function unfold(head: string): string {
  return head.replace(/\r?\n[ \t]+/g, ' ');
}

function decodeBody(body: string, encoding: string): Buffer {
  if (/base64/i.test(encoding)) return Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (/quoted-printable/i.test(encoding)) {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1');
  }
  return Buffer.from(body, 'utf8');
}

/** RFC 2047 encoded words, as nodemailer writes a subject that is not plain ASCII. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, (_, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}
