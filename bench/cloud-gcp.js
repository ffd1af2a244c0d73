// The GCP side of the cloud action benchmark (bench/cloud.js, BENCH_CLOUD_PROVIDER=gcp): Compute
// Engine resets run by the service (src/actions/cloud/gcp.ts) beside the bare
// @google-cloud/compute (InstancesClient, ZoneOperationsClient) with google-auth-library's JWT
// client doing the same calls from the bench process.
//
// The responder: Google's token endpoint and Compute Engine's instances.get, instances.reset and
// zoneOperations.get in this process, over plain HTTP (the SDK's REST transport and the token
// exchange both take http: gax's `protocol` option, gaxios). It does NOT verify assertions, tokens
// or roles (test/support/gce-emulator.ts does, and the tests run pitcrew against it): it issues an
// opaque token naming the service account, answers each reset with a RUNNING zone operation that
// is DONE at its first read, and every instance RUNNING, in the emulator's shapes; and it counts
// the requests by account, call and instance. pitcrew reaches it through PITCREW_GCP_TOKEN_URL and
// PITCREW_GCP_COMPUTE_URL; the baseline's JWT client posts to Google's fixed token URL, so its
// transport sends that one request here instead.
/* global URLSearchParams */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import { InstancesClient, ZoneOperationsClient } from '@google-cloud/compute';
import { gaxios, JWT } from 'google-auth-library';
import { listenOnLoopback } from './procs.js';

const PROJECT = 'bench-project';
const ZONE = 'europe-west1-b';
const SELF = 'https://www.googleapis.com/compute/v1';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** A service account's key file with a fresh key (the responder checks no signature). */
function serviceAccount(name) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = `${name}@${PROJECT}.iam.gserviceaccount.com`;
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { email, privateKey: pem, keyFile: JSON.stringify({ type: 'service_account', project_id: PROJECT, private_key_id: randomUUID().replace(/-/g, ''), private_key: pem, client_email: email, token_uri: GOOGLE_TOKEN_URL }) };
}

const PITCREW = serviceAccount('pitcrew');
const BASELINE = serviceAccount('baseline');

/** Where a request goes: its call name and the instance it is about ('' for none). */
function route(method, path) {
  if (path === '/token' && method === 'POST') return { call: 'token', vm: '' };
  const operation = /^\/compute\/v1\/projects\/[^/]+\/zones\/[^/]+\/operations\/operation-(vm-[0-9a-f]+)-[\w-]+$/.exec(path);
  if (operation && method === 'GET') return { call: 'zoneOperations.get', vm: operation[1] };
  const instance = /^\/compute\/v1\/projects\/[^/]+\/zones\/[^/]+\/instances\/([^/]+)(\/reset)?$/.exec(path);
  if (instance && method === 'POST' && instance[2]) return { call: 'reset', vm: instance[1] };
  if (instance && method === 'GET' && !instance[2]) return { call: 'get', vm: instance[1] };
  return { call: 'other', vm: '' };
}

/** The account a request is from: the assertion's iss for a token, the token's name for Compute. */
function accountOf(call, body, authorization) {
  if (call === 'token') {
    const claims = new URLSearchParams(body).get('assertion')?.split('.')[1] ?? '';
    try {
      return JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')).iss.split('@')[0];
    } catch {
      return '(none)';
    }
  }
  return /^Bearer bench\.([^.]+)\./.exec(authorization ?? '')?.[1] ?? '(none)';
}

function operationJson(vm, status) {
  const zone = `${SELF}/projects/${PROJECT}/zones/${ZONE}`;
  const name = `operation-${vm}-${randomUUID()}`;
  return { kind: 'compute#operation', id: String(Date.now()), name, zone, operationType: 'reset', targetLink: `${zone}/instances/${vm}`, status, progress: status === 'DONE' ? 100 : 0, selfLink: `${zone}/operations/${name}` };
}

async function startResponder() {
  const stats = { byAction: {}, byCall: new Map(), byKey: {}, other: 0, requests: 0 };
  const answer = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      stats.requests += 1;
      const path = new URL(req.url ?? '/', 'http://responder').pathname;
      const { call, vm } = route(req.method, path);
      const key = accountOf(call, Buffer.concat(chunks).toString('utf8'), req.headers.authorization);
      stats.byAction[call] = (stats.byAction[call] ?? 0) + 1;
      stats.byKey[key] = (stats.byKey[key] ?? 0) + 1;
      const callKey = `${key} ${call} ${vm}`;
      stats.byCall.set(callKey, (stats.byCall.get(callKey) ?? 0) + 1);
      switch (call) {
        case 'token':
          return answer(res, 200, { access_token: `bench.${key}.${randomUUID()}`, expires_in: 3599, token_type: 'Bearer' });
        case 'reset':
          return answer(res, 200, operationJson(vm, 'RUNNING'));
        case 'zoneOperations.get':
          return answer(res, 200, { ...operationJson(vm, 'DONE'), name: path.split('/').pop() });
        case 'get':
          return answer(res, 200, { kind: 'compute#instance', name: vm, status: 'RUNNING', zone: `${SELF}/projects/${PROJECT}/zones/${ZONE}`, selfLink: `${SELF}/projects/${PROJECT}/zones/${ZONE}/instances/${vm}` });
        default:
          stats.other += 1;
          return answer(res, 400, { error: { code: 400, message: `the bench responder answers tokens, instances.get, instances.reset and zoneOperations.get only (got ${req.method} ${path})`, errors: [{ reason: 'invalid' }] } });
      }
    });
  });
  const url = await listenOnLoopback(server);
  return { url, stats, calls: (key, call, vm) => stats.byCall.get(`${key} ${call} ${vm}`) ?? 0 };
}

/** The bare SDK as pitcrew makes its calls: instances.get, instances.reset, zoneOperations.get until DONE, instances.get. */
function baselineClient(responder) {
  const transporter = new gaxios.Gaxios();
  transporter.interceptors.request.add({ resolved: async (config) => (String(config.url) === GOOGLE_TOKEN_URL ? { ...config, url: new URL(`${responder.url}/token`) } : config) });
  const authClient = new JWT({ email: BASELINE.email, key: BASELINE.privateKey, scopes: ['https://www.googleapis.com/auth/compute'], transporter });
  const options = { authClient, apiEndpoint: '127.0.0.1', port: Number(new URL(responder.url).port), protocol: 'http', fallback: true };
  const instances = new InstancesClient(options);
  const operations = new ZoneOperationsClient(options);
  return {
    async run(id) {
      const request = { project: PROJECT, zone: ZONE, instance: id.split('/').pop() };
      await instances.get(request);
      let [operation] = await instances.reset(request);
      operation = operation.latestResponse;
      while (operation.status !== 'DONE') [operation] = await operations.get({ project: PROJECT, zone: ZONE, operation: operation.name });
      const [after] = await instances.get(request);
      return after.status === 'RUNNING' ? { ok: true, error: null } : { ok: false, error: `status ${after.status}` };
    },
    destroy() {
      void instances.close();
      void operations.close();
    },
  };
}

/** The GCP driver of bench/cloud.js. */
export const gcpDriver = {
  title: 'Compute Engine resets',
  sdk: 'Google Cloud SDK',
  calls: 'Compute calls',
  distFile: 'dist/src/actions/cloud/gcp.js',
  infrastructureType: 'CLOUD_GCP',
  action: {},
  keys: { pitcrew: 'pitcrew', baseline: 'baseline' },
  /** What each instance sees per run: one reset; two instances.get and one zoneOperations.get (DONE at its first read). */
  mutation: 'reset',
  reads: { get: 2, 'zoneOperations.get': 1 },
  /** An instance of the bench zone in the key's project, named in the payload as ZONE/NAME. */
  instanceId: (series, n) => `${ZONE}/vm-${(series + n).toString(16).padStart(8, '0')}`,
  vmOf: (id) => id.split('/').pop(),
  start: startResponder,
  pitcrewEnv: (responder) => ({ PITCREW_GCP_TOKEN_URL: `${responder.url}/token`, PITCREW_GCP_COMPUTE_URL: responder.url }),
  credential: () => ({ name: 'bench gcp', provider: 'gcp', secret: { serviceAccountJson: PITCREW.keyFile } }),
  baselineClient,
  describeResponder: (responder) => `Google's token endpoint and Compute's instances.get/reset and zoneOperations.get in this process on ${responder.url} (HTTP; no assertion or token check; the operation DONE at its first read, always RUNNING); PITCREW_GCP_TOKEN_URL, PITCREW_GCP_COMPUTE_URL`,
  describeRule: () => `webhook rule, action cloud reboot (instances.reset) of the GCE instance in the payload (${ZONE}/vm-…, project ${PROJECT})`,
  describeBaseline: (perOperation) => `${perOperation ? 'a new JWT client + InstancesClient + ZoneOperationsClient per instance' : 'one JWT client + InstancesClient + ZoneOperationsClient'} (google-auth-library, @google-cloud/compute REST) in this process: get, reset, zoneOperations.get until DONE, get per instance`,
};
