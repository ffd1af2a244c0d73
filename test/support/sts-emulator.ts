import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAuthorization, rawRequestOf, sigV4, type RawRequest } from './ec2-emulator.js';

/**
 * An emulator of AWS STS's AssumeRole (Query API version 2011-06-15), for pitcrew's cloud actions
 * with a credential that names a role: the real @aws-sdk/client-sts calls it with the stored keys,
 * and the temporary credentials it issues are then the ones EC2 must see (the test hands them to
 * the EC2 emulator through `onIssue`). Where each behaviour comes from:
 *
 * - Request: POST / form-encoded `Action=AssumeRole&Version=2011-06-15&RoleArn=…&RoleSessionName=…`
 *   (+ `ExternalId`, `DurationSeconds`), signed with SigV4 for service `sts`
 *   (https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html; the signature is
 *   checked as the EC2 emulator checks it: test/support/ec2-emulator.ts).
 * - Answer: `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
 *   <Credentials>{AccessKeyId, SecretAccessKey, SessionToken, Expiration}</Credentials><AssumedRoleUser>
 *   {Arn arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION, AssumedRoleId AROA…:SESSION}</AssumedRoleUser>
 *   </AssumeRoleResult><ResponseMetadata><RequestId/></ResponseMetadata></AssumeRoleResponse>`: the
 *   API reference's example, as the goamz STS test fixtures quote it. Temporary key ids start ASIA.
 * - Errors: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>
 *   <Code/><Message/></Error><RequestId/></ErrorResponse>` (an STS reply quoted in
 *   Netflix/security_monkey issue #77). A caller the role does not trust, or a wrong ExternalId:
 *   403 AccessDenied "User: ARN is not authorized to perform: sts:AssumeRole on resource: ROLE"
 *   (the same issue and the SDK error messages users quote); an unknown access key: 403
 *   InvalidClientTokenId "The security token included in the request is invalid."; a signature made
 *   with the wrong secret: 403 SignatureDoesNotMatch (https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html).
 * - DurationSeconds 900 to 43200, default 3600; RoleSessionName 2 to 64 of [\w+=,.@-]: a 400
 *   ValidationError otherwise (API reference; the message wording is the emulator's own).
 */
export interface StsEmulator {
  url: string;
  /** A long-term key of an IAM user (its ARN names it in AccessDenied). */
  addKey(accessKeyId: string, secretAccessKey: string, userArn: string): void;
  /** A role the users of `trusts` may assume, with this ExternalId when one is set. */
  addRole(roleArn: string, options: { trusts: string[]; externalId?: string }): void;
  /** Every AssumeRole asked, in order: who asked, for which role and session, and the answer's status. */
  requests: Array<{ accessKeyId: string | null; roleArn: string; sessionName: string; externalId: string | null; status: number }>;
  close(): Promise<void>;
}

export interface IssuedCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiresAt: Date;
  roleArn: string;
}

const XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

class StsError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

const xmlEscape = (value: string) => value.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

export async function startStsEmulator(onIssue: (issued: IssuedCredentials) => void): Promise<StsEmulator> {
  const keys = new Map<string, { secretAccessKey: string; userArn: string }>();
  const roles = new Map<string, { trusts: string[]; externalId?: string }>();
  const requests: StsEmulator['requests'] = [];

  /** The caller's user ARN once the signature checks out. */
  function authenticate(raw: RawRequest): { accessKeyId: string; userArn: string } {
    const header = (name: string) => raw.headers.find(([n]) => n.toLowerCase() === name)?.[1];
    const auth = parseAuthorization(header('authorization') ?? '');
    const amzDate = header('x-amz-date');
    if (!auth || !amzDate) throw new StsError(400, 'IncompleteSignature', 'The request signature does not conform to AWS standards.');
    const key = keys.get(auth.accessKeyId);
    if (!key) throw new StsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
    const { signature } = sigV4(raw, { signedHeaders: auth.signedHeaders, amzDate, scope: `${auth.date}/${auth.region}/${auth.service}/${auth.terminator}`, secretAccessKey: key.secretAccessKey });
    const [given, expected] = [Buffer.from(auth.signature), Buffer.from(signature)];
    if (auth.service !== 'sts' || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new StsError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');
    }
    return { accessKeyId: auth.accessKeyId, userArn: key.userArn };
  }

  function assumeRole(params: URLSearchParams, caller: { userArn: string }, record: StsEmulator['requests'][number]): string {
    const duration = Number(params.get('DurationSeconds') ?? 3600);
    if (!/^[\w+=,.@-]{2,64}$/.test(record.sessionName)) throw new StsError(400, 'ValidationError', `1 validation error detected: Value '${record.sessionName}' at 'roleSessionName' failed to satisfy constraint`);
    if (!Number.isInteger(duration) || duration < 900 || duration > 43_200) throw new StsError(400, 'ValidationError', `1 validation error detected: Value '${duration}' at 'durationSeconds' failed to satisfy constraint`);
    const role = roles.get(record.roleArn);
    if (!role || !role.trusts.includes(caller.userArn) || (role.externalId ?? null) !== record.externalId) {
      throw new StsError(403, 'AccessDenied', `User: ${caller.userArn} is not authorized to perform: sts:AssumeRole on resource: ${record.roleArn}`);
    }
    const issued: IssuedCredentials = {
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(96).toString('base64'),
      expiresAt: new Date(Date.now() + duration * 1000),
      roleArn: record.roleArn,
    };
    onIssue(issued);
    const [, account = '', name = ''] = /^arn:aws[a-z-]*:iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(record.roleArn) ?? [];
    return `<AssumeRoleResult><Credentials><AccessKeyId>${issued.accessKeyId}</AccessKeyId><SecretAccessKey>${issued.secretAccessKey}</SecretAccessKey>`
      + `<SessionToken>${issued.sessionToken}</SessionToken><Expiration>${issued.expiresAt.toISOString()}</Expiration></Credentials>`
      + `<AssumedRoleUser><Arn>arn:aws:sts::${account}:assumed-role/${xmlEscape(name)}/${xmlEscape(record.sessionName)}</Arn><AssumedRoleId>AROA3XFRBF535EXAMPLE:${xmlEscape(record.sessionName)}</AssumedRoleId></AssumedRoleUser>`
      + '</AssumeRoleResult>';
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const raw = rawRequestOf(req, body);
      const params = new URLSearchParams(body.toString('utf8'));
      const record = { accessKeyId: null as string | null, roleArn: params.get('RoleArn') ?? '', sessionName: params.get('RoleSessionName') ?? '', externalId: params.get('ExternalId'), status: 0 };
      requests.push(record);
      const requestId = randomUUID();
      const send = (status: number, xml: string) => {
        record.status = status;
        res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId, date: new Date().toUTCString() });
        res.end(xml);
      };
      try {
        const caller = authenticate(raw);
        record.accessKeyId = caller.accessKeyId;
        if (params.get('Action') !== 'AssumeRole') throw new StsError(400, 'InvalidAction', `Could not find operation ${params.get('Action') ?? ''} for version 2011-06-15`);
        const result = assumeRole(params, caller, record);
        send(200, `<AssumeRoleResponse xmlns="${XMLNS}">${result}<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
      } catch (error) {
        const e = error instanceof StsError ? error : new StsError(500, 'InternalFailure', String(error));
        send(e.status, `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${e.code}</Code><Message>${xmlEscape(e.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    addKey(accessKeyId, secretAccessKey, userArn) {
      keys.set(accessKeyId, { secretAccessKey, userArn });
    },
    addRole(roleArn, options) {
      roles.set(roleArn, options);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
