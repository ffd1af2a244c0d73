// The Azure side of the cloud action benchmark (bench/cloud.js, BENCH_CLOUD_PROVIDER=azure): VM
// restarts run by the service (src/actions/cloud/azure.ts) beside the bare @azure/identity +
// @azure/arm-compute doing the same calls from the bench process.
//
// The responder: Entra ID's token endpoint and Resource Manager's VM restart in this process, on
// one HTTPS port with a self-signed certificate (MSAL and the Azure SDK refuse plain http). pitcrew
// trusts it through PITCREW_AZURE_CA_FILE, the baseline through the SDK's tlsOptions.ca. It does NOT
// verify tokens, roles or states (test/support/azure-emulator.ts does, and the tests run pitcrew
// against it): it issues an opaque token naming the client, answers each restart 202 with an
// Azure-AsyncOperation that has already succeeded, and every instance view PowerState/running, in
// the emulator's shapes; and it counts the requests by client id, call and VM.
/* global URLSearchParams */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { ComputeManagementClient } from '@azure/arm-compute';
import { ClientSecretCredential } from '@azure/identity';
import selfsigned from 'selfsigned';
import { listenOnLoopback, makeTempDir } from './procs.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const SUBSCRIPTION = '0b1f6471-1bf0-4dda-aec3-111122223333';
const GROUP = 'bench';
// Made-up service principals; the responder checks no secret.
const PITCREW = { tenantId: TENANT, clientId: '1b730954-1685-4b74-9bfd-dac224a7b894', clientSecret: 'bench~pitcrew.secret-000000000000000', subscriptionId: SUBSCRIPTION };
const BASELINE = { tenantId: TENANT, clientId: '04b07795-8ddb-461a-bbee-02f9e1bf7b46', clientSecret: 'bench~baseline.secret-00000000000000', subscriptionId: SUBSCRIPTION };

/** Where a request goes: its call name and the VM it is about ('' for none). */
function route(method, url) {
  const vm = /\/providers\/Microsoft\.Compute\/virtualMachines\/([^/?]+)(\/restart|\/instanceView)?$/i.exec(url.pathname);
  if (vm && method === 'POST' && vm[2]?.toLowerCase() === '/restart') return { call: 'restart', vm: decodeURIComponent(vm[1]) };
  if (vm && method === 'GET' && vm[2]?.toLowerCase() === '/instanceview') return { call: 'instanceView', vm: decodeURIComponent(vm[1]) };
  const operation = /\/providers\/Microsoft\.Compute\/locations\/westeurope\/operations\/([^/]+)$/i.exec(url.pathname);
  if (operation && method === 'GET') return { call: url.searchParams.get('monitor') === 'true' ? 'location' : 'operation', vm: decodeURIComponent(operation[1]).split('~')[0] };
  if (/\/v2\.0\/\.well-known\/openid-configuration$/.test(url.pathname)) return { call: 'openid-configuration', vm: '' };
  if (/\/oauth2\/v2\.0\/token$/.test(url.pathname) && method === 'POST') return { call: 'token', vm: '' };
  return { call: 'other', vm: '' };
}

async function startResponder() {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  const caFile = path.join(makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-azure-')), 'ca.pem');
  fs.writeFileSync(caFile, pems.cert);
  const stats = { byAction: {}, byCall: new Map(), byKey: {}, other: 0, requests: 0 };
  let base = '';
  const answer = (res, status, body, headers = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { 'x-ms-request-id': randomUUID(), ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}), 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      stats.requests += 1;
      const url = new URL(req.url ?? '/', base);
      const { call, vm } = route(req.method, url);
      const form = call === 'token' ? new URLSearchParams(Buffer.concat(chunks).toString('utf8')) : null;
      const key = form?.get('client_id') ?? /^Bearer bench\.([^.]+)\./.exec(req.headers.authorization ?? '')?.[1] ?? '(none)';
      stats.byAction[call] = (stats.byAction[call] ?? 0) + 1;
      stats.byKey[key] = (stats.byKey[key] ?? 0) + 1;
      const callKey = `${key} ${call} ${vm}`;
      stats.byCall.set(callKey, (stats.byCall.get(callKey) ?? 0) + 1);
      const tenant = url.pathname.split('/')[1];
      switch (call) {
        case 'openid-configuration':
          return answer(res, 200, { token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`, jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`, issuer: `${base}/${tenant}/v2.0`, authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`, end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout` });
        case 'token':
          return answer(res, 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: `bench.${key}.${randomUUID()}` });
        case 'restart': {
          const operation = `${base}/subscriptions/${SUBSCRIPTION}/providers/Microsoft.Compute/locations/westeurope/operations/${encodeURIComponent(`${vm}~${randomUUID()}`)}?p=${randomUUID()}`;
          return answer(res, 202, undefined, { 'azure-asyncoperation': `${operation}&api-version=${url.searchParams.get('api-version')}`, location: `${operation}&monitor=true&api-version=${url.searchParams.get('api-version')}` });
        }
        case 'operation':
          return answer(res, 200, { name: url.pathname.split('/').pop(), status: 'Succeeded', startTime: new Date().toISOString(), endTime: new Date().toISOString() });
        case 'location':
          return answer(res, 200);
        case 'instanceView':
          return answer(res, 200, { computerName: vm, statuses: [{ code: 'ProvisioningState/succeeded', level: 'Info', displayStatus: 'Provisioning succeeded' }, { code: 'PowerState/running', level: 'Info', displayStatus: 'VM running' }] });
        default:
          stats.other += 1;
          return answer(res, 400, { error: { code: 'BenchResponder', message: `the bench responder answers tokens, restart, its operation and instanceView only (got ${req.method} ${url.pathname})` } });
      }
    });
  });
  base = (await listenOnLoopback(server)).replace(/^http:/, 'https:');
  return { url: base, caFile, caPem: pems.cert, stats, calls: (key, call, vm) => stats.byCall.get(`${key} ${call} ${vm}`) ?? 0 };
}

/** The bare SDK as pitcrew makes its calls: the instance view, the restart and its operation, the instance view. */
function baselineClient(responder) {
  // The responder's certificate alone: the SDK's TLS option as a user of it would set it.
  const options = { tlsOptions: { ca: [responder.caPem] } };
  const credential = new ClientSecretCredential(BASELINE.tenantId, BASELINE.clientId, BASELINE.clientSecret, { authorityHost: responder.url, disableInstanceDiscovery: true, ...options });
  const client = new ComputeManagementClient(credential, SUBSCRIPTION, { endpoint: responder.url, credentials: { scopes: [`${responder.url}/.default`] }, ...options });
  const powerState = async (name) => (await client.virtualMachines.instanceView(GROUP, name)).statuses?.find((s) => s.code?.startsWith('PowerState/'))?.code;
  return {
    async run(id) {
      const name = id.split('/').pop();
      await powerState(name);
      await client.virtualMachines.restart(GROUP, name).pollUntilDone();
      const state = await powerState(name);
      return state === 'PowerState/running' ? { ok: true, error: null } : { ok: false, error: `state ${state}` };
    },
    destroy() {},
  };
}

/** The Azure driver of bench/cloud.js. */
export const azureDriver = {
  title: 'Azure VM restarts',
  sdk: 'Azure SDK',
  calls: 'ARM calls',
  distFile: 'dist/src/actions/cloud/azure.js',
  infrastructureType: 'CLOUD_AZURE',
  action: {},
  keys: { pitcrew: PITCREW.clientId, baseline: BASELINE.clientId },
  /** What each instance sees per run: one restart; two instance views, the operation's status and its Location. */
  mutation: 'restart',
  reads: { instanceView: 2, operation: 1, location: 1 },
  /** A VM of the bench group, named in the payload as group/name. */
  instanceId: (series, n) => `${GROUP}/vm-${(series + n).toString(16).padStart(8, '0')}`,
  vmOf: (id) => id.split('/').pop(),
  start: startResponder,
  pitcrewEnv: (responder) => ({ PITCREW_AZURE_AUTHORITY_HOST: responder.url, PITCREW_AZURE_RESOURCE_MANAGER_URL: responder.url, PITCREW_AZURE_CA_FILE: responder.caFile }),
  credential: () => ({ name: 'bench azure', provider: 'azure', secret: PITCREW }),
  baselineClient,
  describeResponder: (responder) => `Entra ID's token endpoint and ARM's VM restart in this process on ${responder.url} (HTTPS, self-signed, trusted through PITCREW_AZURE_CA_FILE; no token or role check; the operation done at once, always PowerState/running)`,
  describeRule: (region) => `webhook rule, action cloud reboot (restart) of the Azure VM in the payload (${region ? `${region}, ` : ''}${GROUP}/vm-…)`,
  describeBaseline: (perOperation) => `${perOperation ? 'a new ClientSecretCredential + ComputeManagementClient per VM' : 'one ClientSecretCredential + ComputeManagementClient'} (@azure/identity, @azure/arm-compute) in this process: instanceView, restart until its operation succeeded, instanceView per VM`,
};
