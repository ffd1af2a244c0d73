import { generateKeyPairSync, randomUUID, sign, timingSafeEqual, verify } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import selfsigned from 'selfsigned';

/**
 * An emulator of Microsoft Entra ID's token service (the v2.0 client-credentials flow a service
 * principal uses) and of Azure Resource Manager's Microsoft.Compute virtualMachines API, for tests
 * of pitcrew's Azure cloud actions, driven by the real @azure/identity (MSAL Node) and
 * @azure/arm-compute. Both serve HTTPS with one self-signed certificate (`caPem`), on two ports:
 * MSAL refuses an authority that is not https, and @azure/core-rest-pipeline's
 * bearerTokenAuthenticationPolicy refuses to send a token over http. ARM checks, on every call, the
 * bearer token's RS256 signature with the token service's own key, its audience, its expiry, the
 * subscription's tenant and the principal's role assignments, as ARM does. Where each behaviour
 * comes from:
 *
 * Entra ID
 * - GET /{tenant}/v2.0/.well-known/openid-configuration: what MSAL fetches first for a tenant
 *   authority ("…v2.0/.well-known/openid-configuration", Authority.defaultOpenIdConfigurationEndpoint
 *   in node_modules/@azure/msal-node/node_modules/@azure/msal-common/dist/authority/Authority.mjs);
 *   it needs authorization_endpoint, token_endpoint, issuer, jwks_uri (OpenIdConfigResponse.mjs).
 *   The document's fields and values are those of the nock recording of @azure/arm-compute's tests
 *   in Azure/azure-sdk-for-js (GET /88888888-…/v2.0/.well-known/openid-configuration, 2022-01-06).
 *   With `disableInstanceDiscovery` MSAL skips GET /common/discovery/instance (identity's
 *   getKnownAuthorities in node_modules/@azure/identity/dist/esm/msal/utils.js), so the emulator
 *   does not serve it.
 * - An unknown tenant → 400 {"error":"invalid_tenant","error_description":"AADSTS90002: Tenant '…'
 *   not found. Check to make sure you have the correct tenant ID and are signing into the correct
 *   cloud. Check with your subscription administrator, this may happen if there are no active
 *   subscriptions for the tenant.\r\nTrace ID: …\r\nCorrelation ID: …\r\nTimestamp: …",
 *   "error_codes":[90002],"timestamp","trace_id","correlation_id","error_uri"} (the body quoted in
 *   Azure/azure-cli#22145 and james-gould/azure-keyvault-emulator#324; 400 in
 *   sjkp/letsencrypt-siteextension#108).
 * - POST /{tenant}/oauth2/v2.0/token, form-encoded client_id, scope, grant_type=client_credentials,
 *   client_secret, and what MSAL Node adds: x-client-SKU, x-client-VER, x-client-OS, x-client-CPU,
 *   x-ms-lib-capability, x-client-current-telemetry, x-client-last-telemetry, client-request-id,
 *   claims (ClientCredentialClient.createTokenRequestBody in
 *   node_modules/@azure/msal-node/dist/client/ClientCredentialClient.mjs; the same body in the
 *   recording above). The answer: {"token_type":"Bearer","expires_in":…,"ext_expires_in":…,
 *   "access_token":…} (the recording).
 * - Errors share one body: {error, error_description: "AADSTSn: …\r\nTrace ID: …\r\nCorrelation ID:
 *   …\r\nTimestamp: …", error_codes: [n], timestamp, trace_id, correlation_id, error_uri}. A wrong
 *   secret → 401 invalid_client AADSTS7000215 "Invalid client secret provided. Ensure the secret
 *   being sent in the request is the client secret value, not the client secret ID, for a secret
 *   added to app '{clientId}'." (bodies quoted in OfficeDev/microsoft-365-agents-toolkit#8621,
 *   keycloak/keycloak#31294, Azure/sap-automation#418). An unknown client → 400 unauthorized_client
 *   AADSTS700016 "Application with identifier '…' was not found in the directory '…'…"; no secret →
 *   401 invalid_client AADSTS7000218; a scope without /.default → 400 invalid_scope AADSTS1002012;
 *   a resource the tenant does not know (it knows ARM's, Microsoft Graph's and those added) → 400 invalid_resource
 *   AADSTS500011 (the texts of the AADSTS
 *   error code reference, reference-error-codes.md in MicrosoftDocs/azure-docs).
 * - The access token: an RS256 JWT (header typ, alg, kid) with the v1.0 claims ARM reads: aud (the
 *   resource: the scope without /.default), iss https://sts.windows.net/{tid}/, iat, nbf, exp, appid,
 *   appidacr "1", idp, oid, sub, tid, ver "1.0". GET /{tenant}/discovery/v2.0/keys serves the key.
 *
 * Azure Resource Manager
 * - Every call needs ?api-version= (400 MissingApiVersionParameter "The api-version query parameter
 *   (?api-version=) is required for all requests.") and a bearer token: none → 401
 *   AuthenticationFailed "Authentication failed. The 'Authorization' header is missing."; not
 *   "Bearer …" → 401 AuthenticationFailedInvalidHeader "Authentication failed. The 'Authorization'
 *   header is provided in an invalid format." (Azure/azure-sdk-for-python#4124,
 *   hashicorp/terraform-provider-azurerm#3612); a token that is not one the token service signed →
 *   401 InvalidAuthenticationToken "The access token is invalid."; another audience → 401
 *   InvalidAuthenticationTokenAudience "The access token has been obtained for wrong audience or
 *   resource '…'. It should exactly match with one of the allowed audiences '…/','…'."
 *   (Azure-Samples/active-directory-dotnetcore-daemon-v2#145); expired → 401
 *   ExpiredAuthenticationToken "The access token expiry UTC time '6/15/2026 8:22:51 AM' is earlier
 *   than current UTC time '…'." (microsoft/foundry-dev-tools#461); another tenant's token → 401
 *   InvalidAuthenticationTokenTenant "The access token is from the wrong issuer '…'. It must match
 *   the tenant '…' associated with this subscription…". 401s carry WWW-Authenticate: Bearer
 *   authorization_uri="…", error="invalid_token", error_description="…". Errors are
 *   {"error":{"code","message"}} (ARM's CloudError; common-types ErrorResponse).
 * - Authorization before existence: a principal without a role assignment covering the call's
 *   action at its scope → 403 AuthorizationFailed "The client '{appid}' with object id '{oid}' does
 *   not have authorization to perform action '{action}' over scope '{scope}' or the scope is
 *   invalid. If access was recently granted, please refresh your credentials." (bodies quoted in
 *   cloudquery/cloudquery#16133, Azure/azure-powershell#12115), also for a VM that does not exist.
 *   The actions are the resource provider operations of Microsoft.Compute
 *   (role-based-access-control/resource-provider-operations.md): virtualMachines/read (get, list),
 *   virtualMachines/instanceView/read, virtualMachines/start/action, virtualMachines/deallocate/action,
 *   virtualMachines/restart/action, virtualMachines/delete, and locations/operations/read ("Gets the
 *   status of an asynchronous operation"). An unknown subscription → 404 SubscriptionNotFound "The
 *   subscription '…' could not be found."; an unknown group → 404 ResourceGroupNotFound "Resource
 *   group '…' could not be found." (Azure/azure-cli#18226); an unknown VM → 404 ResourceNotFound
 *   "The Resource 'Microsoft.Compute/virtualMachines/{vm}' under resource group '{rg}' was not found.
 *   For more details please go to https://aka.ms/ARMResourceNotFoundFix" (Azure/azure-powershell#15117).
 *   Names are case-insensitive (resource-name-rules.md: "Resource and resource group names are
 *   case-insensitive"); the emulator keeps the case they were created with.
 * - POST …/virtualMachines/{vm}/start | deallocate | restart and DELETE …/virtualMachines/{vm} → 202,
 *   no body, Azure-AsyncOperation …/providers/Microsoft.Compute/locations/{loc}/operations/{id}?p=…
 *   &api-version=… and Location the same with &monitor=true (the headers of the recording above, whose
 *   disk operations use …/DiskOperations/…; the VM ones …/operations/…). The Azure-AsyncOperation URL
 *   answers 200 {name, startTime, status: InProgress | Succeeded | Failed | Canceled, endTime?,
 *   error?: {code, message}}; the Location URL 202 while it runs, then 200 with no body ("acceptable
 *   for this to be a 200/204 NoContent if the action does not require a response (e.g. restarting a
 *   VM)"): Azure/azure-resource-manager-rpc v1.0/async-api-reference.md. VirtualMachines_Deallocate
 *   answers 200 or 202 with a location header
 *   (specification/compute/…/stable/2024-07-01/examples/virtualMachineExamples/VirtualMachine_Deallocate_MaximumSet_Gen.json
 *   in Azure/azure-rest-api-specs). Restart needs the VM running: 409 OperationNotAllowed "The
 *   operation requires the VM to be running (or set to run)." (the RestError of @azure/arm-compute
 *   quoted in PierreBeucher/cloudypad#69). A restart never deallocates (MicrosoftDocs/azure-docs#51232).
 * - GET …/virtualMachines/{vm}/instanceView → {computerName, osName, statuses: [{code:
 *   "ProvisioningState/succeeded", level: "Info", displayStatus: "Provisioning succeeded", time},
 *   {code: "PowerState/running", level: "Info", displayStatus: "VM running"}], …}
 *   (VirtualMachine_Get_InstanceView.json in the same examples folder).
 * - GET /subscriptions/{s}/providers/Microsoft.Compute/virtualMachines → {value: [{name, id, type,
 *   location, tags, properties}], nextLink?} (VirtualMachine_ListAll_MinimumSet_Gen.json; the SDK
 *   follows nextLink: itemName "value", nextLinkName "nextLink" in
 *   node_modules/@azure/arm-compute/dist/esm/api/virtualMachines/operations.js). Its only $filter is
 *   'virtualMachineScaleSet/id' eq …: none for tags.
 *
 * The emulator's own choices (no source says how Azure times them): a state change settles after
 * `transitionPolls` reads of the VM's state or of its operation (instanceView, a GET of the VM, the
 * operation's status or Location URL, each counts one), so tests wait by polling, never by sleeping;
 * while it runs the power state is PowerState/starting or PowerState/deallocating (a restart stays
 * PowerState/running) and the provisioning state ProvisioningState/updating (deleting for a delete).
 * A new operation on a VM cancels the one in flight (its status Canceled, OperationPreempted). Start
 * of a running VM and deallocate of a deallocated one succeed with nothing to do. ARM checks the
 * api-version's form only. The emulator does not serve PUT/PATCH (creating VMs), powerOff, or the
 * instance discovery endpoint.
 */

export type PowerState = 'running' | 'starting' | 'stopped' | 'deallocating' | 'deallocated';

export interface EmulatedVm {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  powerState: PowerState;
  deleted: boolean;
  /** Restarts it has completed. */
  restarts: number;
}

export interface AzureRequest {
  service: 'entra' | 'arm';
  method: string;
  /** The path as received, without the query. */
  path: string;
  apiVersion: string | null;
  /**
   * ARM: the authorization action the call needs (Microsoft.Compute/virtualMachines/start/action);
   * Entra ID: openid-configuration, keys or token.
   */
  action: string;
  /** Entra ID: the client_id asked for; ARM: the appid of the bearer token, if it was a token the emulator signed. */
  clientId: string | null;
  /** ARM: the bearer token sent; Entra ID: the token issued. */
  token: string | null;
  /** Entra ID: a token was issued; ARM: the call was authenticated and authorized. */
  authorized: boolean;
  status: number;
  /** Entra ID token requests: the form fields, client_secret left out. */
  form?: Record<string, string>;
}

export interface IssuedToken {
  token: string;
  tenantId: string;
  clientId: string;
  audience: string;
  expiresAt: Date;
}

export interface AzureEmulator {
  /** https://127.0.0.1:PORT, the authority host (PITCREW_AZURE_AUTHORITY_HOST). */
  authorityHost: string;
  /** https://127.0.0.1:PORT, Resource Manager (PITCREW_AZURE_RESOURCE_MANAGER_URL); tokens are for it. */
  resourceManagerUrl: string;
  /** The certificate both serve, PEM: what a client must trust. */
  caPem: string;
  /** A service principal (an app registration's) with its client secret, in its tenant. */
  addServicePrincipal(principal: { tenantId: string; clientId: string; clientSecret: string }): void;
  /** Another resource (an application ID URI) tokens may be asked for, as a tenant registers one. */
  addResource(identifierUri: string): void;
  /** A subscription of `tenantId`: ARM takes only that tenant's tokens for it. */
  addSubscription(subscriptionId: string, tenantId: string): void;
  /**
   * A role assignment: the principal may do `actions` (wildcards *, case-insensitive; default
   * everything) at `scope` (/subscriptions/{s}, …/resourceGroups/{rg}, a VM's id) and below.
   */
  grant(clientId: string, scope: string, actions?: readonly string[]): void;
  /** A VM (its subscription must exist); returns its resource id. Location defaults to westeurope. */
  addVm(vm: { subscriptionId: string; resourceGroup: string; name: string; powerState: 'running' | 'deallocated' | 'stopped'; location?: string; tags?: Record<string, string>; transitionPolls?: number }): string;
  /** The VM as held now (a copy; reading it is not a poll); undefined if never added. Any case. */
  vm(id: string): EmulatedVm | undefined;
  /** The next operation on the VM ends Failed with this error once it settles, the VM as it was. */
  failNextOperation(id: string, error: { code: string; message: string }): void;
  /** Every request, to both services, in order of arrival. */
  requests: AzureRequest[];
  tokens(): IssuedToken[];
  /** Reads a state change stays transitional for (see above). Default 1; a VM's own overrides it. */
  transitionPolls: number;
  /** VMs per page of a list (nextLink beyond). Default 100. */
  listPageSize: number;
  /** Moves the emulator's clock (token expiry and what ARM compares it with). */
  advanceClock(ms: number): void;
  close(): Promise<void>;
}

const TOKEN_LIFETIME_SECONDS = 3599;
/** The other resource the tenants know: Microsoft Graph, whose tokens ARM refuses (another audience). */
const GRAPH = 'https://graph.microsoft.com';
const ALL_ACTIONS = ['*'];
const COMPUTE = 'Microsoft.Compute';
const VM_TYPE = `${COMPUTE}/virtualMachines`;
const MAX_BODY = 1 << 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

type Operation = 'start' | 'deallocate' | 'restart' | 'delete';

/** While an operation runs, the power state shown, and where it settles. */
const TRANSITIONS: Record<Operation, { during: (from: PowerState) => PowerState; settles: PowerState | 'deleted' }> = {
  start: { during: (from) => (from === 'running' ? 'running' : 'starting'), settles: 'running' },
  deallocate: { during: (from) => (from === 'deallocated' ? 'deallocated' : 'deallocating'), settles: 'deallocated' },
  restart: { during: () => 'running', settles: 'running' },
  delete: { during: (from) => from, settles: 'deleted' },
};

const DISPLAY: Record<PowerState, string> = { running: 'VM running', starting: 'VM starting', stopped: 'VM stopped', deallocating: 'VM deallocating', deallocated: 'VM deallocated' };

interface Principal {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  objectId: string;
}

interface Grant {
  clientId: string;
  scope: string;
  actions: RegExp[];
}

interface HeldOperation {
  id: string;
  subscriptionId: string;
  location: string;
  kind: Operation;
  vm: HeldVm;
  status: 'InProgress' | 'Succeeded' | 'Failed' | 'Canceled';
  startTime: string;
  endTime?: string;
  error?: { code: string; message: string };
  failWith?: { code: string; message: string };
  from: PowerState;
  pollsLeft: number;
}

interface HeldVm extends Omit<EmulatedVm, 'restarts'> {
  vmId: string;
  restarts: number;
  created: string;
  ownPolls?: number;
  operation?: HeldOperation;
  failNext?: { code: string; message: string };
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

const armError = (status: number, code: string, message: string, headers: Record<string, string> = {}) => new Refusal(status, { error: { code, message } }, headers);

const base64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/** .NET's invariant short date and long time, as ARM writes times in its messages: 6/15/2026 8:22:51 AM. */
function dotnetTime(ms: number): string {
  const d = new Date(ms);
  const h = d.getUTCHours();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()} ${h % 12 || 12}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function wildcard(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i');
}

function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > MAX_BODY }));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const common = { 'x-ms-request-id': randomUUID(), 'cache-control': 'no-cache', ...headers };
  if (body === undefined) {
    res.writeHead(status, { ...common, 'content-length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { ...common, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

export async function startAzureEmulator(): Promise<AzureEmulator> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID().replaceAll('-', '').slice(0, 27);
  const principals = new Map<string, Principal>();
  const subscriptions = new Map<string, string>();
  const grants: Grant[] = [];
  const vms = new Map<string, HeldVm>();
  const operations = new Map<string, HeldOperation>();
  const issued: IssuedToken[] = [];
  const resources: string[] = [];
  const requests: AzureRequest[] = [];
  let clockOffset = 0;
  const now = () => Date.now() + clockOffset;
  let authority = '';
  let arm = '';

  // -------------------------------------------------------------------------------------------
  // Entra ID

  function entraError(status: number, error: string, code: number, message: string): Refusal {
    const timestamp = new Date(now()).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    const traceId = randomUUID();
    const correlationId = randomUUID();
    return new Refusal(status, {
      error,
      error_description: `AADSTS${code}: ${message}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
      error_codes: [code],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `${authority}/error?code=${code}`,
    });
  }

  const tenantKnown = (tenant: string) => [...principals.values()].some((p) => p.tenantId.toLowerCase() === tenant.toLowerCase()) || [...subscriptions.values()].some((t) => t.toLowerCase() === tenant.toLowerCase());

  function unknownTenant(tenant: string): Refusal {
    return entraError(400, 'invalid_tenant', 90002, `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`);
  }

  function openIdConfiguration(tenant: string) {
    const at = `${authority}/${tenant}`;
    return {
      token_endpoint: `${at}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${at}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: `${at}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      authorization_endpoint: `${at}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${at}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${at}/oauth2/v2.0/logout`,
      claims_supported: ['sub', 'iss', 'cloud_instance_name', 'cloud_instance_host_name', 'cloud_graph_host_name', 'msgraph_host', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'nonce', 'preferred_username', 'name', 'tid', 'ver', 'at_hash', 'c_hash', 'email'],
      kerberos_endpoint: `${at}/kerberos`,
      tenant_region_scope: 'EU',
      cloud_instance_name: 'microsoftonline.com',
      cloud_graph_host_name: 'graph.windows.net',
      msgraph_host: 'graph.microsoft.com',
      rbac_url: 'https://pas.windows.net',
    };
  }

  function signToken(claims: Record<string, unknown>): string {
    const head = base64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', kid }));
    const body = base64url(JSON.stringify(claims));
    return `${head}.${body}.${base64url(sign('sha256', Buffer.from(`${head}.${body}`), signing.privateKey))}`;
  }

  /** The resource a client-credentials scope names: `{resource}/.default`. */
  function resourceOf(scope: string | undefined, tenant: string): string {
    const scopes = (scope ?? '').split(' ').filter((s) => s && !['openid', 'profile', 'offline_access'].includes(s));
    const wanted = scopes[0];
    if (!wanted || !wanted.endsWith('/.default')) {
      throw entraError(400, 'invalid_scope', 1002012, `The provided value for scope ${scope ?? ''} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`);
    }
    const resource = wanted.slice(0, -'/.default'.length);
    if (![arm, GRAPH, ...resources].includes(resource.replace(/\/$/, '').toLowerCase())) {
      throw entraError(400, 'invalid_resource', 500011, `The resource principal named ${resource} was not found in the tenant named ${tenant}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`);
    }
    return resource;
  }

  function issueToken(tenant: string, form: URLSearchParams, entry: AzureRequest): unknown {
    if (form.get('grant_type') !== 'client_credentials') {
      throw entraError(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${form.get('grant_type') ?? ''}'.`);
    }
    const clientId = form.get('client_id') ?? '';
    entry.clientId = clientId || null;
    const principal = principals.get(clientId.toLowerCase());
    if (!principal || principal.tenantId.toLowerCase() !== tenant.toLowerCase()) {
      throw entraError(400, 'unauthorized_client', 700016, `Application with identifier '${clientId}' was not found in the directory '${tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`);
    }
    const secret = form.get('client_secret');
    if (secret === null) throw entraError(401, 'invalid_client', 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
    if (!sameSecret(secret, principal.clientSecret)) {
      throw entraError(401, 'invalid_client', 7000215, `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${principal.clientId}'.`);
    }
    const audience = resourceOf(form.get('scope') ?? undefined, tenant);
    const iat = Math.floor(now() / 1000);
    const exp = iat + TOKEN_LIFETIME_SECONDS;
    const iss = `https://sts.windows.net/${principal.tenantId}/`;
    const token = signToken({ aud: audience, iss, iat, nbf: iat, exp, appid: principal.clientId, appidacr: '1', idp: iss, oid: principal.objectId, sub: principal.objectId, tid: principal.tenantId, uti: randomUUID().slice(0, 22), ver: '1.0' });
    issued.push({ token, tenantId: principal.tenantId, clientId: principal.clientId, audience, expiresAt: new Date(exp * 1000) });
    entry.token = token;
    entry.authorized = true;
    return { token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, ext_expires_in: TOKEN_LIFETIME_SECONDS, access_token: token };
  }

  async function entra(req: IncomingMessage, url: URL, entry: AzureRequest): Promise<{ status: number; body: unknown }> {
    const match = /^\/([^/]+)\/(v2\.0\/\.well-known\/openid-configuration|discovery\/v2\.0\/keys|oauth2\/v2\.0\/token)$/.exec(url.pathname);
    if (!match) throw entraError(404, 'invalid_request', 90007, `The path ${url.pathname} is not served by this emulator.`);
    const [, tenant = '', what = ''] = match;
    entry.action = what.startsWith('oauth2') ? 'token' : what.startsWith('discovery') ? 'keys' : 'openid-configuration';
    if (!tenantKnown(tenant)) throw unknownTenant(tenant);
    if (entry.action === 'openid-configuration') return { status: 200, body: openIdConfiguration(tenant) };
    if (entry.action === 'keys') return { status: 200, body: { keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid, use: 'sig', kty: 'RSA', issuer: `${authority}/${tenant}/v2.0` }] } };
    if (req.method !== 'POST') throw entraError(405, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
    const { text } = await readBody(req);
    const form = new URLSearchParams(text);
    entry.form = Object.fromEntries([...form.entries()].filter(([name]) => name !== 'client_secret'));
    return { status: 200, body: issueToken(tenant, form, entry) };
  }

  // -------------------------------------------------------------------------------------------
  // Resource Manager: who is calling

  interface Caller {
    appid: string;
    oid: string;
    tid: string;
  }

  function bearer(req: IncomingMessage, entry: AzureRequest): Caller {
    const header = req.headers.authorization;
    const challenge = (description: string) => ({ 'www-authenticate': `Bearer authorization_uri="${authority}/common", error="invalid_token", error_description="${description}"` });
    if (header === undefined) throw armError(401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.", challenge("The authentication failed because of missing 'Authorization' header."));
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw armError(401, 'AuthenticationFailedInvalidHeader', "Authentication failed. The 'Authorization' header is provided in an invalid format.", challenge('The access token is invalid.'));
    const token = match[1]!;
    entry.token = token;
    const claims = verified(token);
    if (!claims) throw armError(401, 'InvalidAuthenticationToken', 'The access token is invalid.', challenge('The access token is invalid.'));
    entry.clientId = typeof claims.appid === 'string' ? claims.appid : null;
    const audiences = [`${arm}/`, arm];
    if (typeof claims.aud !== 'string' || !audiences.includes(claims.aud)) {
      throw armError(401, 'InvalidAuthenticationTokenAudience', `The access token has been obtained for wrong audience or resource '${String(claims.aud)}'. It should exactly match with one of the allowed audiences ${audiences.map((a) => `'${a}'`).join(',')}.`, challenge('The access token has been obtained for wrong audience or resource.'));
    }
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : 0;
    if (exp <= now()) {
      throw armError(401, 'ExpiredAuthenticationToken', `The access token expiry UTC time '${dotnetTime(exp)}' is earlier than current UTC time '${dotnetTime(now())}'.`, challenge('The access token expiry UTC time is earlier than current UTC time.'));
    }
    return { appid: String(claims.appid), oid: String(claims.oid), tid: String(claims.tid) };
  }

  /** The claims of a JWT this token service signed (RS256 with its key); undefined for anything else. */
  function verified(token: string): Record<string, unknown> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [head = '', body = '', signature = ''] = parts;
    try {
      const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string; kid?: string };
      if (header.alg !== 'RS256' || header.kid !== kid) return undefined;
      if (!verify('sha256', Buffer.from(`${head}.${body}`), signing.publicKey, Buffer.from(signature, 'base64url'))) return undefined;
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  /** The subscription must exist and be the token's tenant's; then the principal needs `action` at `scope`. */
  function authorize(caller: Caller, subscriptionId: string, action: string, scope: string): void {
    const tenant = subscriptions.get(subscriptionId.toLowerCase());
    if (tenant === undefined) throw armError(404, 'SubscriptionNotFound', `The subscription '${subscriptionId}' could not be found.`);
    if (tenant.toLowerCase() !== caller.tid.toLowerCase()) {
      throw armError(401, 'InvalidAuthenticationTokenTenant', `The access token is from the wrong issuer 'https://sts.windows.net/${caller.tid}/'. It must match the tenant 'https://sts.windows.net/${tenant}/' associated with this subscription. Please use the authority (URL) '${authority}/${tenant}' to get the token. Note, if the subscription is transferred to another tenant there is no impact to the services, but information about new tenant could take time to propagate (up to an hour). If you just transferred your subscription and see this error message, please try back later.`);
    }
    const within = (granted: string) => scope.toLowerCase() === granted || scope.toLowerCase().startsWith(`${granted}/`);
    const allowed = grants.some((g) => g.clientId === caller.appid.toLowerCase() && within(g.scope) && g.actions.some((a) => a.test(action)));
    if (!allowed) {
      throw armError(403, 'AuthorizationFailed', `The client '${caller.appid}' with object id '${caller.oid}' does not have authorization to perform action '${action}' over scope '${scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Resource Manager: virtual machines

  const vmKey = (subscriptionId: string, group: string, name: string) => `/subscriptions/${subscriptionId}/resourcegroups/${group}/providers/${VM_TYPE}/${name}`.toLowerCase();
  const groupKnown = (subscriptionId: string, group: string) => [...vms.values()].some((vm) => vm.subscriptionId.toLowerCase() === subscriptionId.toLowerCase() && vm.resourceGroup.toLowerCase() === group.toLowerCase());

  function findVm(subscriptionId: string, group: string, name: string): HeldVm {
    const vm = vms.get(vmKey(subscriptionId, group, name));
    if (vm && !vm.deleted) return vm;
    if (!groupKnown(subscriptionId, group)) throw armError(404, 'ResourceGroupNotFound', `Resource group '${group}' could not be found.`);
    throw armError(404, 'ResourceNotFound', `The Resource '${VM_TYPE}/${name}' under resource group '${group}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`);
  }

  function settle(operation: HeldOperation): void {
    const { vm } = operation;
    operation.endTime = new Date(now()).toISOString();
    vm.operation = undefined;
    if (operation.failWith) {
      operation.status = 'Failed';
      operation.error = operation.failWith;
      vm.powerState = operation.from;
      return;
    }
    operation.status = 'Succeeded';
    const settles = TRANSITIONS[operation.kind].settles;
    if (settles === 'deleted') vm.deleted = true;
    else vm.powerState = settles;
    if (operation.kind === 'restart') vm.restarts += 1;
  }

  /** One read of the VM's state or of its operation: the change it is in moves one step on. */
  function poll(vm: HeldVm): void {
    const operation = vm.operation;
    if (!operation) return;
    if (operation.pollsLeft > 0) operation.pollsLeft -= 1;
    else settle(operation);
  }

  function begin(vm: HeldVm, kind: Operation): HeldOperation {
    if (kind === 'restart' && vm.powerState !== 'running' && vm.operation?.kind !== 'start') {
      throw armError(409, 'OperationNotAllowed', 'The operation requires the VM to be running (or set to run).');
    }
    const previous = vm.operation;
    if (previous) {
      previous.status = 'Canceled';
      previous.endTime = new Date(now()).toISOString();
      previous.error = { code: 'OperationPreempted', message: 'Operation execution has been preempted by a more recent operation.' };
    }
    const from = previous?.from ?? vm.powerState;
    const operation: HeldOperation = {
      id: randomUUID(),
      subscriptionId: vm.subscriptionId,
      location: vm.location,
      kind,
      vm,
      status: 'InProgress',
      startTime: new Date(now()).toISOString(),
      from,
      pollsLeft: vm.ownPolls ?? emulator.transitionPolls,
      ...(vm.failNext ? { failWith: vm.failNext } : {}),
    };
    vm.failNext = undefined;
    vm.operation = operation;
    vm.powerState = TRANSITIONS[kind].during(vm.powerState);
    operations.set(operation.id, operation);
    if (operation.pollsLeft <= 0) settle(operation);
    return operation;
  }

  function operationUrls(operation: HeldOperation, apiVersion: string) {
    const url = `${arm}/subscriptions/${operation.subscriptionId}/providers/${COMPUTE}/locations/${operation.location}/operations/${operation.id}?p=${randomUUID()}`;
    return { 'azure-asyncoperation': `${url}&api-version=${apiVersion}`, location: `${url}&monitor=true&api-version=${apiVersion}` };
  }

  function statuses(vm: HeldVm) {
    const provisioning = vm.operation ? (vm.operation.kind === 'delete' ? 'deleting' : 'updating') : 'succeeded';
    return [
      { code: `ProvisioningState/${provisioning}`, level: 'Info', displayStatus: provisioning === 'succeeded' ? 'Provisioning succeeded' : provisioning === 'deleting' ? 'Deleting' : 'Updating', time: vm.created },
      { code: `PowerState/${vm.powerState}`, level: 'Info', displayStatus: DISPLAY[vm.powerState] },
    ];
  }

  function instanceView(vm: HeldVm) {
    return { computerName: vm.name, osName: 'ubuntu', osVersion: '22.04', hyperVGeneration: 'V2', statuses: statuses(vm) };
  }

  function vmView(vm: HeldVm, expand: boolean) {
    const provisioningState = vm.operation ? (vm.operation.kind === 'delete' ? 'Deleting' : 'Updating') : 'Succeeded';
    return {
      name: vm.name,
      id: vm.id,
      type: VM_TYPE,
      location: vm.location,
      ...(Object.keys(vm.tags).length > 0 ? { tags: vm.tags } : {}),
      properties: {
        vmId: vm.vmId,
        hardwareProfile: { vmSize: 'Standard_B2s' },
        provisioningState,
        timeCreated: vm.created,
        ...(expand ? { instanceView: instanceView(vm) } : {}),
      },
    };
  }

  function list(url: URL, subscriptionId: string, apiVersion: string) {
    const mine = [...vms.values()].filter((vm) => vm.subscriptionId.toLowerCase() === subscriptionId.toLowerCase() && !vm.deleted);
    const skip = Number(url.searchParams.get('$skiptoken') ?? '0');
    const page = mine.slice(skip, skip + emulator.listPageSize);
    const statusOnly = url.searchParams.get('statusOnly') === 'true';
    const out: Record<string, unknown> = { value: page.map((vm) => vmView(vm, statusOnly)) };
    if (skip + page.length < mine.length) {
      out.nextLink = `${arm}/subscriptions/${subscriptionId}/providers/${VM_TYPE}?api-version=${apiVersion}&%24skiptoken=${skip + page.length}`;
    }
    return out;
  }

  /** GET of an operation's status (Azure-AsyncOperation) or result (Location, monitor=true). */
  function operationStatus(url: URL, subscriptionId: string, id: string): { status: number; body?: unknown; headers?: Record<string, string> } {
    const operation = operations.get(id);
    if (!operation || operation.subscriptionId.toLowerCase() !== subscriptionId.toLowerCase()) throw armError(404, 'NotFound', `The operation '${id}' was not found.`);
    if (operation.status === 'InProgress') poll(operation.vm);
    if (url.searchParams.get('monitor') === 'true') {
      if (operation.status === 'InProgress') return { status: 202, headers: { location: url.toString() } };
      if (operation.status === 'Succeeded') return { status: 200 };
      return { status: 400, body: { error: operation.error } };
    }
    const { endTime, error } = operation;
    return { status: 200, body: { startTime: operation.startTime, ...(endTime ? { endTime } : {}), status: operation.status, ...(error ? { error } : {}), name: operation.id } };
  }

  const VM_PATH = new RegExp(`^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/${COMPUTE.replace('.', '\\.')}/virtualMachines/([^/]+)(?:/(start|deallocate|restart|instanceView))?/?$`, 'i');
  const LIST_PATH = new RegExp(`^/subscriptions/([^/]+)/providers/${COMPUTE.replace('.', '\\.')}/virtualMachines/?$`, 'i');
  const OPERATION_PATH = new RegExp(`^/subscriptions/([^/]+)/providers/${COMPUTE.replace('.', '\\.')}/locations/([^/]+)/operations/([^/]+)$`, 'i');
  const ACTIONS: Record<string, string> = { start: 'start/action', deallocate: 'deallocate/action', restart: 'restart/action', instanceview: 'instanceView/read' };

  function armCall(req: IncomingMessage, url: URL, entry: AzureRequest): { status: number; body?: unknown; headers?: Record<string, string> } {
    const method = req.method ?? 'GET';
    const path = url.pathname.split('/').map((s) => decodeURIComponent(s)).join('/');
    const vmMatch = VM_PATH.exec(path);
    const listMatch = LIST_PATH.exec(path);
    const operationMatch = OPERATION_PATH.exec(path);
    const subscriptionId = vmMatch?.[1] ?? listMatch?.[1] ?? operationMatch?.[1] ?? '';
    const sub = vmMatch?.[4]?.toLowerCase();
    entry.action = vmMatch
      ? `${VM_TYPE}/${sub ? ACTIONS[sub] : method === 'DELETE' ? 'delete' : 'read'}`
      : listMatch ? `${VM_TYPE}/read` : operationMatch ? `${COMPUTE}/locations/operations/read` : 'unknown';
    const caller = bearer(req, entry);
    const apiVersion = url.searchParams.get('api-version');
    if (apiVersion === null) throw armError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
    if (!API_VERSION.test(apiVersion)) throw armError(400, 'InvalidApiVersionParameter', `The api-version '${apiVersion}' is invalid. The supported versions are '2024-07-01,2026-03-01'.`);
    if (!vmMatch && !listMatch && !operationMatch) throw armError(404, 'InvalidResourceType', `The resource type could not be found for the path '${path}'.`);
    if (!UUID.test(subscriptionId)) throw armError(400, 'InvalidSubscriptionId', `The provided subscription identifier '${subscriptionId}' is malformed or invalid.`);
    if (listMatch) {
      if (method !== 'GET') throw armError(405, 'MethodNotAllowed', `The method '${method}' is not allowed.`);
      authorize(caller, subscriptionId, entry.action, `/subscriptions/${subscriptionId}`);
      entry.authorized = true;
      return { status: 200, body: list(url, subscriptionId, apiVersion) };
    }
    if (operationMatch) {
      authorize(caller, subscriptionId, entry.action, `/subscriptions/${subscriptionId}`);
      entry.authorized = true;
      return operationStatus(url, subscriptionId, operationMatch[3]!);
    }
    const [, , group = '', name = ''] = vmMatch!;
    const scope = `/subscriptions/${subscriptionId}/resourceGroups/${group}/providers/${VM_TYPE}/${name}`;
    authorize(caller, subscriptionId, entry.action, scope);
    entry.authorized = true;
    const vm = findVm(subscriptionId, group, name);
    if (sub === 'instanceview' && method === 'GET') {
      poll(vm);
      if (vm.deleted) findVm(subscriptionId, group, name);
      return { status: 200, body: instanceView(vm) };
    }
    if (sub && sub !== 'instanceview' && method === 'POST') return { status: 202, headers: operationUrls(begin(vm, sub as Operation), apiVersion) };
    if (!sub && method === 'GET') {
      poll(vm);
      if (vm.deleted) findVm(subscriptionId, group, name);
      return { status: 200, body: vmView(vm, url.searchParams.get('$expand') === 'instanceView') };
    }
    if (!sub && method === 'DELETE') return { status: 202, headers: operationUrls(vm.operation?.kind === 'delete' ? vm.operation : begin(vm, 'delete'), apiVersion) };
    throw armError(405, 'MethodNotAllowed', `The method '${method}' is not allowed on ${path}.`);
  }

  // -------------------------------------------------------------------------------------------
  // The two servers

  function handler(service: AzureRequest['service']) {
    return (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', service === 'entra' ? authority : arm);
      const entry: AzureRequest = { service, method: req.method ?? '', path: url.pathname, apiVersion: url.searchParams.get('api-version'), action: '', clientId: null, token: null, authorized: false, status: 0 };
      requests.push(entry);
      const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
        entry.status = status;
        send(res, status, body, headers);
      };
      const work = async () => {
        if (service === 'entra') {
          const answer = await entra(req, url, entry);
          return reply(answer.status, answer.body);
        }
        const { tooLarge } = await readBody(req);
        if (tooLarge) throw armError(413, 'RequestEntityTooLarge', 'The request is too large.');
        const answer = armCall(req, url, entry);
        return reply(answer.status, answer.body, answer.headers);
      };
      work().catch((error: unknown) => {
        if (error instanceof Refusal) return reply(error.status, error.body, error.headers);
        reply(500, { error: { code: 'InternalServerError', message: String(error) } });
      });
    };
  }

  const listen = async (service: AzureRequest['service']) => {
    const server = https.createServer({ key: pems.private, cert: pems.cert }, handler(service));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  const entraServer = await listen('entra');
  const armServer = await listen('arm');
  authority = entraServer.url;
  arm = armServer.url;

  const emulator: AzureEmulator = {
    authorityHost: authority,
    resourceManagerUrl: arm,
    caPem: pems.cert,
    requests,
    transitionPolls: 1,
    listPageSize: 100,
    addServicePrincipal({ tenantId, clientId, clientSecret }) {
      principals.set(clientId.toLowerCase(), { tenantId, clientId, clientSecret, objectId: randomUUID() });
    },
    addResource(identifierUri) {
      resources.push(identifierUri.replace(/\/$/, '').toLowerCase());
    },
    addSubscription(subscriptionId, tenantId) {
      subscriptions.set(subscriptionId.toLowerCase(), tenantId);
    },
    grant(clientId, scope, actions = ALL_ACTIONS) {
      grants.push({ clientId: clientId.toLowerCase(), scope: scope.replace(/\/$/, '').toLowerCase(), actions: actions.map(wildcard) });
    },
    addVm(vm) {
      if (!subscriptions.has(vm.subscriptionId.toLowerCase())) throw new Error(`add subscription ${vm.subscriptionId} first`);
      const key = vmKey(vm.subscriptionId, vm.resourceGroup, vm.name);
      if (vms.has(key)) throw new Error(`VM ${vm.resourceGroup}/${vm.name} already exists`);
      const id = `/subscriptions/${vm.subscriptionId}/resourceGroups/${vm.resourceGroup}/providers/${VM_TYPE}/${vm.name}`;
      vms.set(key, {
        id,
        subscriptionId: vm.subscriptionId,
        resourceGroup: vm.resourceGroup,
        name: vm.name,
        location: vm.location ?? 'westeurope',
        tags: { ...vm.tags },
        powerState: vm.powerState,
        deleted: false,
        restarts: 0,
        vmId: randomUUID(),
        created: new Date(now()).toISOString(),
        ...(vm.transitionPolls === undefined ? {} : { ownPolls: vm.transitionPolls }),
      });
      return id;
    },
    vm(id) {
      const vm = vms.get(id.toLowerCase());
      if (!vm) return undefined;
      return { id: vm.id, subscriptionId: vm.subscriptionId, resourceGroup: vm.resourceGroup, name: vm.name, location: vm.location, tags: { ...vm.tags }, powerState: vm.powerState, deleted: vm.deleted, restarts: vm.restarts };
    },
    failNextOperation(id, error) {
      const vm = vms.get(id.toLowerCase());
      if (!vm) throw new Error(`no VM ${id}`);
      vm.failNext = error;
    },
    tokens: () => issued.map((t) => ({ ...t, expiresAt: new Date(t.expiresAt) })),
    advanceClock(ms) {
      clockOffset += ms;
    },
    close: async () => {
      for (const { server } of [entraServer, armServer]) {
        server.closeAllConnections();
        await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      }
    },
  };
  return emulator;
}
