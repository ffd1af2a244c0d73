import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of the Amazon EC2 Query API (version 2016-11-15), for tests of pitcrew's cloud
 * actions (start, stop, reboot, terminate instances) and of its "test credential" call, driven by
 * the real @aws-sdk/client-ec2. It checks AWS Signature Version 4 on every request by recomputing
 * the signature from the raw request with the secret it holds, so a client that signs wrongly, or
 * signs with the wrong secret, is refused as EC2 refuses it. Where each behaviour comes from:
 *
 * - Requests: POST / with a form-encoded body `Action=StartInstances&Version=2016-11-15&InstanceId.1=i-…`,
 *   lists as `InstanceId.N`, filters as `Filter.N.Name` / `Filter.N.Value.M` (that is what the SDK
 *   sends: @aws-sdk/core AwsEc2QueryProtocol.serializeRequest in
 *   node_modules/@aws-sdk/core/dist-cjs/submodules/protocols/index.js, and a request captured from
 *   @aws-sdk/client-ec2 3.1169). GET with the parameters in the query string is accepted too.
 * - Responses: `<XResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>` then
 *   instancesSet/item{instanceId, currentState{code,name}, previousState{code,name}} for Start,
 *   Stop and Terminate; `<return>true</return>` for Reboot; reservationSet/item/instancesSet/item
 *   {instanceId, instanceState{code,name}, tagSet/item{key,value}} for DescribeInstances;
 *   regionInfo/item{regionName, regionEndpoint, optInStatus} for DescribeRegions. API reference:
 *   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_InstanceStateChange.html,
 *   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Region.html, and the response
 *   templates of getmoto/moto moto/ec2/responses/instances.py.
 * - State codes 0 pending, 16 running, 32 shutting-down, 48 terminated, 64 stopping, 80 stopped:
 *   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_InstanceState.html
 * - Errors: `<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>`,
 *   client errors 400 (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html);
 *   `InvalidInstanceID.NotFound` "The instance ID 'i-…' does not exist" (boto test fixtures quoting
 *   EC2); `RequestExpired` 400 when the request's date is more than 15 minutes off, "Request has
 *   expired." (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/CommonErrors.html and the
 *   AWS CLI message users quote); `DryRunOperation` 412 "Request would have succeeded, but DryRun
 *   flag is set." (AWS CLI output for `ec2 stop-instances --dry-run`; moto's EC2 tests assert 412).
 * - Authentication failures: EC2 answers both an unknown access key and a signature made with the
 *   wrong secret with 401 `AuthFailure` "AWS was not able to validate the provided access
 *   credentials" — not the `SignatureDoesNotMatch` / `InvalidClientTokenId` of other services.
 *   getmoto/moto moto/iam/access_control.py (IAMRequest._raise_signature_does_not_match and
 *   _raise_invalid_access_key: "if self._service == 'ec2': raise AuthFailureError()"),
 *   moto/core/exceptions.py (AuthFailureError, code 401), and the aws-parallelcluster docs, which
 *   give AuthFailure for both "Invalid Access Key IDs" and "Mismatch between Access Key ID and Secret".
 * - Signature Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
 *   canonical request = method \n canonical URI \n canonical query \n canonical headers \n\n signed
 *   headers \n hex(sha256(body)); string to sign = "AWS4-HMAC-SHA256" \n X-Amz-Date \n scope \n
 *   hex(sha256(canonical request)); signing key = HMAC chain "AWS4"+secret → date → region →
 *   service → "aws4_request"; Authorization `AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/ec2/aws4_request,
 *   SignedHeaders=…, Signature=…`. Checked against the AWS SigV4 test suite (see the test), and
 *   read beside @smithy/signature-v4 (node_modules/@smithy/signature-v4/dist-cjs/index.js), which
 *   also adds and signs x-amz-content-sha256 and x-amz-security-token.
 *
 * Not checked against a source, so the emulator's own choice: the wording of IncorrectInstanceState,
 * InvalidInstanceID.Malformed and the several-ids NotFound messages; MissingAuthenticationToken
 * being 401; which states each action accepts (start: stopped, no-op on pending/running; stop:
 * running/pending, no-op on stopping/stopped; reboot: running/pending; terminate: anything, no-op
 * once shutting-down); refusing (AuthFailure) a scope that names a region it does not serve.
 *
 * Region: the credential scope names it, as the endpoint ec2.REGION.amazonaws.com would; an
 * instance of another region is not found there. Time: a state change settles after
 * `transitionPolls` DescribeInstances calls in the instance's region (each call counts, whatever
 * it asks for), so tests wait by polling, as pitcrew and the SDK waiters do, never by sleeping.
 */

export type InstanceStateName = 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';

export interface EmulatedInstance {
  id: string;
  region: string;
  state: InstanceStateName;
  tags: Record<string, string>;
  /** How many RebootInstances calls it has had. */
  reboots: number;
}

export interface Ec2Request {
  action: string;
  params: Record<string, string>;
  /** The access key the request's credential names, valid or not; null when it names none. */
  accessKeyId: string | null;
  /** The region of the credential scope; null when there is none. */
  region: string | null;
  /** Whether the signature checked out with a known key (and its session token). */
  authorized: boolean;
  /** The HTTP status the emulator answered. */
  status: number;
}

export interface Ec2Emulator {
  /** http://127.0.0.1:PORT, to give the SDK as `endpoint`. */
  url: string;
  /** Accept this access key; with a session token, requests must carry it (X-Amz-Security-Token). */
  addKey(accessKeyId: string, secretAccessKey: string, sessionToken?: string): void;
  /** Forget an access key: its requests are refused from now on. */
  removeKey(accessKeyId: string): void;
  /** Add an instance. Region defaults to us-east-1. Its id must look like EC2's (i- and 8 or 17 hex digits). */
  addInstance(instance: { id: string; region?: string; state: InstanceStateName; tags?: Record<string, string> }): void;
  /** The instance as the emulator holds it now (a copy); undefined if there is none. */
  instance(id: string): EmulatedInstance | undefined;
  /** Every request, in order of arrival. */
  requests: Ec2Request[];
  /**
   * How many DescribeInstances calls (in the instance's region) a state change takes to settle:
   * pending → running, stopping → stopped, shutting-down → terminated. 1 (the default) settles on
   * the first DescribeInstances after the change; 0 settles right after the call that made it.
   */
  transitionPolls: number;
  /** The regions DescribeRegions lists and credential scopes may name. */
  regions: string[];
  close(): Promise<void>;
}

export interface Ec2EmulatorOptions {
  /** Regions it serves (default: a few commercial ones, eu-west-1 and us-east-1 among them). */
  regions?: string[];
}

const API_VERSION = '2016-11-15';
const XMLNS = `http://ec2.amazonaws.com/doc/${API_VERSION}/`;
const DEFAULT_REGIONS = ['us-east-1', 'us-east-2', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];
const STATE_CODES: Record<InstanceStateName, number> = { pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80 };
const SETTLES_TO: Partial<Record<InstanceStateName, InstanceStateName>> = { pending: 'running', stopping: 'stopped', 'shutting-down': 'terminated' };
/** The 15 minutes of https://docs.aws.amazon.com/AWSEC2/latest/APIReference/CommonErrors.html (RequestExpired). */
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTH_FAILURE = 'AWS was not able to validate the provided access credentials';
const INSTANCE_ID = /^i-([0-9a-f]{8}|[0-9a-f]{17})$/;

// ---------------------------------------------------------------------------------------------
// Signature Version 4, from the IAM User Guide's "Create a signed AWS API request".

/** A request as it arrived, before any parsing: what the signature covers. */
export interface RawRequest {
  method: string;
  /** The path as sent on the wire (still percent-encoded), without the query. */
  path: string;
  /** The query string as sent on the wire, without the '?'. */
  query: string;
  /** Header name/value pairs in arrival order (names in any case; repeats allowed). */
  headers: Array<[string, string]>;
  body: Buffer | string;
}

/** The request as it came on the wire, which the signature covers. */
export function rawRequestOf(req: http.IncomingMessage, body: Buffer): RawRequest {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const raw: RawRequest = { method: req.method ?? 'GET', path: q < 0 ? target : target.slice(0, q), query: q < 0 ? '' : target.slice(q + 1), headers: [], body };
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) raw.headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return raw;
}

/** UriEncode() of the guide: every byte but A-Z a-z 0-9 - _ . ~ as %XY (upper-case hex). */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The path normalized (no empty, '.' or '..' segments) and each segment URI-encoded, as sent (non-S3 services encode twice). */
function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  if (segments.length === 0) return '/';
  return `/${segments.map(uriEncode).join('/')}${path.endsWith('/') ? '/' : ''}`;
}

/** Parameters URI-encoded, sorted by name then value, `name=value` joined by '&' (a bare name gets '='). */
function canonicalQuery(query: string): string {
  const pairs: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    pairs.push([uriEncode(safeDecode(name)), uriEncode(safeDecode(value))]);
  }
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** `name:value\n` per signed header: lower-case name, values trimmed with inner runs of spaces made one, repeats joined by ','. */
function canonicalHeaders(headers: Array<[string, string]>, signedHeaders: string[]): string {
  const values = new Map<string, string[]>();
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    const list = values.get(key) ?? [];
    list.push(value.trim().replace(/\s+/g, ' '));
    values.set(key, list);
  }
  return signedHeaders.map((name) => `${name}:${(values.get(name) ?? []).join(',')}\n`).join('');
}

const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** The signing key: HMAC("AWS4" + secret, date) → region → service → "aws4_request". */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
}

/**
 * The canonical request, string to sign and signature for `request` with the given signed headers,
 * X-Amz-Date and credential scope (DATE/REGION/SERVICE/aws4_request), recomputed from the request
 * itself: the payload hash is that of the body received, whatever x-amz-content-sha256 claims.
 */
export function sigV4(request: RawRequest, signed: { signedHeaders: string[]; amzDate: string; scope: string; secretAccessKey: string }) {
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri(request.path),
    canonicalQuery(request.query),
    canonicalHeaders(request.headers, signed.signedHeaders),
    signed.signedHeaders.join(';'),
    sha256Hex(request.body),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', signed.amzDate, signed.scope, sha256Hex(canonicalRequest)].join('\n');
  const [date = '', region = '', service = ''] = signed.scope.split('/');
  const signature = createHmac('sha256', signingKey(signed.secretAccessKey, date, region, service)).update(stringToSign, 'utf8').digest('hex');
  return { canonicalRequest, stringToSign, signature };
}

/** Parses `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`; null if it is not that. */
export function parseAuthorization(header: string): { accessKeyId: string; date: string; region: string; service: string; terminator: string; signedHeaders: string[]; signature: string } | null {
  const match = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(header.trim());
  if (!match) return null;
  const fields = new Map<string, string>();
  for (const part of match[1]!.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) return null;
  const parts = credential.split('/');
  if (parts.length !== 5) return null;
  const [accessKeyId, date, region, service, terminator] = parts as [string, string, string, string, string];
  return { accessKeyId, date, region, service, terminator, signedHeaders: signedHeaders.split(';'), signature };
}

function parseAmzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

// ---------------------------------------------------------------------------------------------
// The API.

class Ec2Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const xmlEscape = (value: string) => value.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

/** Matches an EC2 filter value, where * is any run of characters and ? any one character. */
function filterMatch(pattern: string, value: string): boolean {
  const regex = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${regex}$`, 's').test(value);
}

/** `Prefix.1`, `Prefix.2`, … in numeric order. */
function listParam(params: Record<string, string>, prefix: string): string[] {
  return Object.keys(params)
    .map((key) => new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.(\\d+)$`).exec(key))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => params[m[0]]!);
}

interface Stored {
  id: string;
  region: string;
  state: InstanceStateName;
  tags: Record<string, string>;
  reboots: number;
  pollsLeft: number;
  reservationId: string;
  launchTime: string;
}

export async function startEc2Emulator(options: Ec2EmulatorOptions = {}): Promise<Ec2Emulator> {
  const keys = new Map<string, { secretAccessKey: string; sessionToken?: string }>();
  const instances = new Map<string, Stored>();
  const requests: Ec2Request[] = [];

  function settle(instance: Stored): void {
    const next = SETTLES_TO[instance.state];
    if (next) instance.state = next;
    instance.pollsLeft = 0;
  }

  function changeState(instance: Stored, to: InstanceStateName): void {
    instance.state = to;
    instance.pollsLeft = emulator.transitionPolls;
  }

  /** The instances of `ids` in `region`; InvalidInstanceID.Malformed / .NotFound naming the others. */
  function lookup(ids: string[], region: string): Stored[] {
    const malformed = ids.find((id) => !INSTANCE_ID.test(id));
    if (malformed !== undefined) throw new Ec2Error(400, 'InvalidInstanceID.Malformed', `Invalid id: "${malformed}"`);
    const missing = ids.filter((id) => instances.get(id)?.region !== region);
    if (missing.length === 1) throw new Ec2Error(400, 'InvalidInstanceID.NotFound', `The instance ID '${missing[0]}' does not exist`);
    if (missing.length > 1) throw new Ec2Error(400, 'InvalidInstanceID.NotFound', `The instance IDs '${missing.join(', ')}' do not exist`);
    return ids.map((id) => instances.get(id)!);
  }

  function requiredIds(params: Record<string, string>): string[] {
    const ids = listParam(params, 'InstanceId');
    if (ids.length === 0) throw new Ec2Error(400, 'MissingParameter', "The request must contain the parameter InstanceId");
    return ids;
  }

  const stateXml = (tag: string, state: InstanceStateName) => `<${tag}><code>${STATE_CODES[state]}</code><name>${state}</name></${tag}>`;

  /** Applies a state change to every instance (all must allow it first), answering instancesSet. */
  function stateChange(params: Record<string, string>, region: string, verb: string, next: (state: InstanceStateName) => InstanceStateName | null): string {
    const targets = lookup(requiredIds(params), region);
    const plans = targets.map((instance) => {
      const to = next(instance.state);
      if (to === null) throw new Ec2Error(400, 'IncorrectInstanceState', `The instance '${instance.id}' is not in a state from which it can be ${verb}.`);
      return { instance, from: instance.state, to };
    });
    const items = plans.map(({ instance, from, to }) => {
      if (to !== from) changeState(instance, to);
      return `<item><instanceId>${instance.id}</instanceId>${stateXml('currentState', to)}${stateXml('previousState', from)}</item>`;
    });
    for (const { instance } of plans) if (instance.pollsLeft <= 0) settle(instance);
    return `<instancesSet>${items.join('')}</instancesSet>`;
  }

  function describeInstances(params: Record<string, string>, region: string): string {
    // Each DescribeInstances is a poll: time passes for every instance in transition in the region.
    for (const instance of instances.values()) {
      if (instance.region !== region || !SETTLES_TO[instance.state]) continue;
      instance.pollsLeft -= 1;
      if (instance.pollsLeft <= 0) settle(instance);
    }
    const ids = listParam(params, 'InstanceId');
    let found = ids.length > 0 ? lookup(ids, region) : [...instances.values()].filter((i) => i.region === region);
    for (let n = 1; params[`Filter.${n}.Name`] !== undefined; n += 1) {
      const name = params[`Filter.${n}.Name`]!;
      const values = listParam(params, `Filter.${n}.Value`);
      const field = (instance: Stored): string[] => {
        if (name.startsWith('tag:')) {
          const value = instance.tags[name.slice(4)];
          return value === undefined ? [] : [value];
        }
        switch (name) {
          case 'instance-state-name':
            return [instance.state];
          case 'instance-state-code':
            return [String(STATE_CODES[instance.state])];
          case 'instance-id':
            return [instance.id];
          case 'tag-key':
            return Object.keys(instance.tags);
          default:
            throw new Ec2Error(400, 'InvalidParameterValue', `The filter '${name}' is invalid`);
        }
      };
      found = found.filter((instance) => field(instance).some((value) => values.some((pattern) => filterMatch(pattern, value))));
    }
    const items = found.map((instance) => {
      const tags = Object.entries(instance.tags)
        .map(([key, value]) => `<item><key>${xmlEscape(key)}</key><value>${xmlEscape(value)}</value></item>`)
        .join('');
      return (
        `<item><reservationId>${instance.reservationId}</reservationId><ownerId>123456789012</ownerId><groupSet/>` +
        `<instancesSet><item><instanceId>${instance.id}</instanceId><imageId>ami-0123456789abcdef0</imageId>${stateXml('instanceState', instance.state)}` +
        `<instanceType>t3.micro</instanceType><launchTime>${instance.launchTime}</launchTime>` +
        `<placement><availabilityZone>${region}a</availabilityZone><tenancy>default</tenancy></placement>` +
        `<tagSet>${tags}</tagSet></item></instancesSet></item>`
      );
    });
    return `<reservationSet>${items.join('')}</reservationSet>`;
  }

  function describeRegions(params: Record<string, string>): string {
    const names = listParam(params, 'RegionName');
    const listed = names.length > 0 ? emulator.regions.filter((r) => names.includes(r)) : emulator.regions;
    const items = listed.map((r) => `<item><regionName>${r}</regionName><regionEndpoint>ec2.${r}.amazonaws.com</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item>`);
    return `<regionInfo>${items.join('')}</regionInfo>`;
  }

  /** Runs an authorized action; returns the inner XML of its response. */
  function act(action: string, params: Record<string, string>, region: string): string {
    switch (action) {
      case 'StartInstances':
        return stateChange(params, region, 'started', (s) => (s === 'stopped' ? 'pending' : s === 'pending' || s === 'running' ? s : null));
      case 'StopInstances':
        return stateChange(params, region, 'stopped', (s) => (s === 'running' || s === 'pending' ? 'stopping' : s === 'stopping' || s === 'stopped' ? s : null));
      case 'TerminateInstances':
        return stateChange(params, region, 'terminated', (s) => (s === 'shutting-down' || s === 'terminated' ? s : 'shutting-down'));
      case 'RebootInstances': {
        const targets = lookup(requiredIds(params), region);
        const wrong = targets.find((i) => i.state !== 'running' && i.state !== 'pending');
        if (wrong) throw new Ec2Error(400, 'IncorrectInstanceState', `The instance '${wrong.id}' is not in a state from which it can be rebooted.`);
        for (const instance of targets) instance.reboots += 1;
        return '<return>true</return>';
      }
      case 'DescribeInstances':
        return describeInstances(params, region);
      case 'DescribeRegions':
        return describeRegions(params);
      default:
        throw new Ec2Error(400, 'InvalidAction', `The action ${action} is not valid for this web service.`);
    }
  }

  /** The signature check; returns the authorized identity or throws what EC2 answers. */
  function authenticate(raw: RawRequest, record: Ec2Request): void {
    const header = (name: string) => raw.headers.find(([n]) => n.toLowerCase() === name)?.[1];
    const authorization = header('authorization');
    if (authorization === undefined) throw new Ec2Error(401, 'MissingAuthenticationToken', 'The request must contain either a valid (registered) AWS access key ID or X.509 certificate.');
    const auth = parseAuthorization(authorization);
    if (!auth) throw new Ec2Error(400, 'IncompleteSignature', 'The request signature does not conform to AWS standards.');
    record.accessKeyId = auth.accessKeyId;
    record.region = auth.region;
    const amzDate = header('x-amz-date');
    if (amzDate === undefined) throw new Ec2Error(400, 'IncompleteSignature', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
    const signedAt = parseAmzDate(amzDate);
    if (signedAt === null) throw new Ec2Error(400, 'IncompleteSignature', `Invalid X-Amz-Date '${amzDate}'.`);
    if (Math.abs(Date.now() - signedAt) > MAX_SKEW_MS) throw new Ec2Error(400, 'RequestExpired', 'Request has expired.');
    if (!auth.signedHeaders.includes('host')) throw new Ec2Error(400, 'IncompleteSignature', "The 'Host' header must be signed.");
    const key = keys.get(auth.accessKeyId);
    if (!key) throw new Ec2Error(401, 'AuthFailure', AUTH_FAILURE);
    if (auth.date !== amzDate.slice(0, 8) || auth.service !== 'ec2' || auth.terminator !== 'aws4_request' || !emulator.regions.includes(auth.region)) {
      throw new Ec2Error(401, 'AuthFailure', AUTH_FAILURE);
    }
    if ((header('x-amz-security-token') ?? null) !== (key.sessionToken ?? null)) throw new Ec2Error(401, 'AuthFailure', AUTH_FAILURE);
    const { signature } = sigV4(raw, { signedHeaders: auth.signedHeaders, amzDate, scope: `${auth.date}/${auth.region}/${auth.service}/${auth.terminator}`, secretAccessKey: key.secretAccessKey });
    const given = Buffer.from(auth.signature);
    const expected = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Ec2Error(401, 'AuthFailure', AUTH_FAILURE);
    record.authorized = true;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const raw = rawRequestOf(req, body);

      const params: Record<string, string> = {};
      for (const [name, value] of new URLSearchParams(raw.query)) params[name] = value;
      if (/^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) for (const [name, value] of new URLSearchParams(body.toString('utf8'))) params[name] = value;
      const record: Ec2Request = { action: params.Action ?? '', params, accessKeyId: null, region: null, authorized: false, status: 0 };
      requests.push(record);

      const requestId = randomUUID();
      const send = (status: number, xml: string) => {
        record.status = status;
        // Date lets the SDK correct its clock after RequestExpired, as it does against EC2.
        res.writeHead(status, { 'content-type': 'text/xml;charset=UTF-8', date: new Date().toUTCString(), 'x-amzn-requestid': requestId });
        res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`);
      };
      try {
        authenticate(raw, record);
        if (!params.Action) throw new Ec2Error(400, 'MissingAction', 'The request must contain the parameter Action');
        if (params.Version === undefined) throw new Ec2Error(400, 'MissingParameter', 'The request must contain the parameter Version');
        if (params.DryRun === 'true') throw new Ec2Error(412, 'DryRunOperation', 'Request would have succeeded, but DryRun flag is set.');
        const inner = act(params.Action, params, record.region!);
        send(200, `<${params.Action}Response xmlns="${XMLNS}"><requestId>${requestId}</requestId>${inner}</${params.Action}Response>`);
      } catch (error) {
        const e = error instanceof Ec2Error ? error : new Ec2Error(500, 'InternalError', `An internal error has occurred (${String(error)})`);
        send(e.status, `<Response><Errors><Error><Code>${xmlEscape(e.code)}</Code><Message>${xmlEscape(e.message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const emulator: Ec2Emulator = {
    url: `http://127.0.0.1:${port}`,
    requests,
    transitionPolls: 1,
    regions: [...(options.regions ?? DEFAULT_REGIONS)],
    addKey(accessKeyId, secretAccessKey, sessionToken) {
      keys.set(accessKeyId, sessionToken === undefined ? { secretAccessKey } : { secretAccessKey, sessionToken });
    },
    removeKey(accessKeyId) {
      keys.delete(accessKeyId);
    },
    addInstance({ id, region = 'us-east-1', state, tags = {} }) {
      if (!INSTANCE_ID.test(id)) throw new Error(`ec2 emulator: "${id}" is not an EC2 instance id (i- and 8 or 17 hex digits)`);
      if (!(state in STATE_CODES)) throw new Error(`ec2 emulator: unknown instance state "${state}"`);
      instances.set(id, { id, region, state, tags: { ...tags }, reboots: 0, pollsLeft: emulator.transitionPolls, reservationId: `r-${id.slice(2)}`, launchTime: new Date().toISOString() });
    },
    instance(id) {
      const found = instances.get(id);
      return found && { id: found.id, region: found.region, state: found.state, tags: { ...found.tags }, reboots: found.reboots };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
