import https from 'node:https';
import tls from 'node:tls';
import { ComputeManagementClient, isRestError, type VirtualMachinesOperations } from '@azure/arm-compute';
import { ClientSecretCredential, type AccessToken, type ClientSecretCredentialOptions, type GetTokenOptions, type TokenCredential } from '@azure/identity';
import type { ProbeResult, Secret } from '../../credentials/schema.js';
import type { RunEnd } from '../../executions/service-executor.js';
import { AZURE_VM, type CloudOperation, type CloudSpec } from './kind.js';
import { PROBE_TIMEOUT_MS, providerError, VERBS, waitForState, type CloudProvider } from './provider.js';

export interface AzureSettings {
  /** PITCREW_AZURE_AUTHORITY_HOST: Microsoft Entra ID, which issues the tokens (https://login.microsoftonline.com). */
  authorityHost: string;
  /** PITCREW_AZURE_RESOURCE_MANAGER_URL: Azure Resource Manager (https://management.azure.com); tokens are asked for `{url}/.default`. */
  resourceManagerUrl: string;
  /** PITCREW_AZURE_CA_FILE's certificates (PEM), trusted by these calls beside Node's own: Azure Stack Hub's CA. */
  caPem?: string | undefined;
  /** How often the VM's state is read while waiting for it (5 s; tests shorten it). */
  pollMs?: number;
}

/** Credentials and clients kept for reuse: each holds its token until it expires, and its connections. */
const KEPT = 50;

type Poller = ReturnType<VirtualMachinesOperations['start']>;
type Begin = (vms: VirtualMachinesOperations, group: string, name: string, options: { abortSignal: AbortSignal }) => Poller;

/** What each operation asks of ARM (Microsoft.Compute virtualMachines), and the state it waits for. */
const OPERATIONS: Record<CloudOperation, { call: string; target: string; begin: Begin }> = {
  start: { call: 'virtualMachines/start', target: 'PowerState/running', begin: (vms, group, name, options) => vms.start(group, name, options) },
  // The portal's Stop: the VM's compute is released and no longer billed (powerOff keeps it, and its bill).
  stop: { call: 'virtualMachines/deallocate', target: 'PowerState/deallocated', begin: (vms, group, name, options) => vms.deallocate(group, name, options) },
  reboot: { call: 'virtualMachines/restart', target: 'PowerState/running', begin: (vms, group, name, options) => vms.restart(group, name, options) },
  terminate: { call: 'virtualMachines/delete', target: 'deleted', begin: (vms, group, name, options) => vms.delete(group, name, options) },
};

/** A VM as ARM addresses it. */
interface VmRef {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

/** Where the operation is, and the VM's power state, at one read. */
interface Progress {
  operation: 'running' | 'succeeded' | 'failed' | 'canceled';
  power: string;
  error?: string;
}

/** An answer of Entra ID or ARM other than the one asked for: its status, code and message. */
class AzureRefusal extends Error {
  constructor(readonly status: number, message: string, override readonly name = 'error') {
    super(message);
  }
}

/**
 * Azure VMs (actions/cloud/runner.ts) with a service principal's client secret, through the
 * official SDKs: a token from Microsoft Entra ID (@azure/identity, kept until it expires), one
 * long-running operation on the VM at Resource Manager (@azure/arm-compute), then the operation's
 * status and the VM's power state (its instance view) read until the operation succeeded and the
 * VM is in the state asked for. The reason records the power state before and at the end.
 */
export class AzureVms implements CloudProvider<'azure'> {
  private readonly credentials = new Map<string, EntraCredential>();
  private readonly clients = new Map<string, ComputeManagementClient>();
  /**
   * With PITCREW_AZURE_CA_FILE, the connections of every Azure call, its CAs in a secure context
   * made once. Given as the SDK's `tlsOptions.ca`, the CA list (Node's ~140 and the file's) went
   * into Node's agent pool key on each request: 27.6 ms of CPU per VM restart (five calls) against
   * 4.7 ms this way, measured with the bare SDK.
   */
  private readonly agent: https.Agent | undefined;

  constructor(private readonly settings: AzureSettings) {
    this.agent = settings.caPem ? new https.Agent({ keepAlive: true, secureContext: tls.createSecureContext({ ca: [...defaultCertificates(), settings.caPem] }) }) : undefined;
  }

  private get pollMs(): number {
    return this.settings.pollMs ?? 5000;
  }

  async run(spec: CloudSpec, secret: Secret<'azure'>, credentialKey: string, signal: AbortSignal): Promise<RunEnd> {
    const { call, target, begin } = OPERATIONS[spec.operation];
    const vm = vmRef(spec.instanceId, secret.subscriptionId);
    if (!vm) return { state: 'failed', reason: `${spec.instanceId} is not an Azure VM (/subscriptions/…/resourceGroups/…/providers/Microsoft.Compute/virtualMachines/…, or resourceGroup/vmName): Azure was not called` };
    const started = performance.now();
    try {
      const vms = this.client(credentialKey, secret, vm.subscriptionId).virtualMachines;
      const before = await powerState(vms, vm, signal, false);
      const poller = begin(vms, vm.resourceGroup, vm.name, { abortSignal: signal });
      await poller.submitted();
      const ended = (p: Progress) => p.operation === 'failed' || p.operation === 'canceled' || (p.operation === 'succeeded' && p.power === target);
      const final = await waitForState(() => progress(poller, vms, vm, signal), ended, spec.waitSeconds, this.pollMs, signal);
      return ending(spec, before, final, ((performance.now() - started) / 1000).toFixed(1));
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: providerError('Azure', `${call} on ${spec.instanceId}`, refusalOf(error), [secret.clientSecret]).message };
    }
  }

  /**
   * The subscription's VMs, listed whole and matched here: ARM's list of a subscription's VMs
   * filters on nothing but a scale set ($filter 'virtualMachineScaleSet/id' eq …), and the
   * resource list's tag filter takes one tag and needs Microsoft.Resources on top of the role.
   * Tag names match in any case, values exactly, as ARM compares them; `region`, when set, is the
   * VMs' location (westeurope).
   */
  async instancesTagged(tags: Readonly<Record<string, string>>, region: string, secret: Secret<'azure'>, credentialKey: string, signal: AbortSignal): Promise<string[]> {
    const vms = this.client(credentialKey, secret, secret.subscriptionId).virtualMachines;
    const wanted = Object.entries(tags).map(([name, value]) => [name.toLowerCase(), value] as const);
    const ids: string[] = [];
    try {
      for await (const vm of vms.listAll({ abortSignal: signal })) {
        if (!vm.id || vm.provisioningState === 'Deleting') continue;
        if (region && vm.location?.toLowerCase() !== region.toLowerCase()) continue;
        const carried = new Map(Object.entries(vm.tags ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
        if (wanted.every(([name, value]) => carried.get(name) === value)) ids.push(vm.id);
      }
    } catch (error) {
      if (signal.aborted) throw error;
      throw providerError('Azure', `virtualMachines/listAll in subscription ${secret.subscriptionId}`, refusalOf(error), [secret.clientSecret]);
    }
    return ids.sort();
  }

  async probe(secret: Secret<'azure'>): Promise<ProbeResult> {
    const retryOptions = { maxRetries: 1 };
    const client = new ComputeManagementClient(new EntraCredential(secret, this.settings, this.agent, retryOptions), secret.subscriptionId, this.clientOptions(retryOptions));
    try {
      const first = await client.virtualMachines.listAll({ abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).byPage().next();
      const page = first.value ?? [];
      const count = `${page.length}${page.continuationToken ? ' or more' : ''} VM${page.length === 1 && !page.continuationToken ? '' : 's'}`;
      return { call: 'entra:token, Microsoft.Compute/virtualMachines/read', message: `Azure accepted the service principal: ${count} in subscription ${secret.subscriptionId} visible to it` };
    } catch (error) {
      throw providerError('Azure', 'a token and a VM list', refusalOf(error), [secret.clientSecret]);
    }
  }

  close(): void {
    this.clients.clear();
    this.credentials.clear();
    this.agent?.destroy();
  }

  /**
   * One credential per credential as last saved (its token reused until it expires: MSAL caches
   * it per credential object), one client per (credential, subscription), the least recently used
   * dropped past KEPT each. A rotated secret changes the credential's key, so the next run makes
   * new ones.
   */
  private client(credentialKey: string, secret: Secret<'azure'>, subscriptionId: string): ComputeManagementClient {
    const credential = kept(this.credentials, credentialKey, () => new EntraCredential(secret, this.settings, this.agent));
    return kept(this.clients, `${credentialKey} ${subscriptionId.toLowerCase()}`, () => new ComputeManagementClient(credential, subscriptionId, this.clientOptions()));
  }

  private clientOptions(retryOptions?: { maxRetries: number }) {
    return {
      endpoint: this.settings.resourceManagerUrl,
      // Resource Manager's own audience: the SDK's default scope is public Azure's whatever the endpoint.
      credentials: { scopes: [`${this.settings.resourceManagerUrl}/.default`] },
      ...(this.agent ? { agent: this.agent } : {}),
      ...(retryOptions ? { retryOptions } : {}),
    };
  }
}

/**
 * A service principal's ClientSecretCredential that says what Entra ID answered when it refused a
 * token: MSAL keeps only its words (AuthenticationRequiredError, CredentialUnavailableError), not
 * the HTTP status, so a policy on the credential's own pipeline notes the refusal as it passes.
 */
class EntraCredential implements TokenCredential {
  private readonly inner: ClientSecretCredential;
  private refused: AzureRefusal | undefined;

  constructor(secret: Secret<'azure'>, private readonly settings: AzureSettings, agent: https.Agent | undefined, retryOptions?: { maxRetries: number }) {
    const noteRefusal: ClientSecretPolicy = {
      name: 'pitcrewEntraRefusal',
      sendRequest: async (request, next) => {
        const response = await next(request);
        if (response.status >= 400) this.refused = entraRefusal(response.status, response.bodyAsText);
        return response;
      },
    };
    this.inner = new ClientSecretCredential(secret.tenantId, secret.clientId, secret.clientSecret, {
      authorityHost: settings.authorityHost,
      // The authority is the operator's choice (PITCREW_AZURE_AUTHORITY_HOST), trusted as given: no
      // instance discovery at login.microsoftonline.com, which a sovereign or private cloud cannot reach.
      disableInstanceDiscovery: true,
      additionalPolicies: [{ policy: noteRefusal, position: 'perCall' }],
      ...(agent ? { agent } : {}),
      ...(retryOptions ? { retryOptions } : {}),
    });
  }

  async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken> {
    this.refused = undefined;
    try {
      return await this.inner.getToken(scopes, options);
    } catch (error) {
      if (this.refused) throw this.refused;
      throw new Error(`no token from Microsoft Entra ID at ${this.settings.authorityHost}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

type ClientSecretPolicy = NonNullable<ClientSecretCredentialOptions['additionalPolicies']>[number]['policy'];

/** Entra ID's {error, error_description} (AADSTS…), its trace lines left out. */
function entraRefusal(status: number, body: string | null | undefined): AzureRefusal {
  try {
    const answer = JSON.parse(body ?? '') as { error?: unknown; error_description?: unknown };
    if (typeof answer.error_description === 'string') {
      return new AzureRefusal(status, `Entra ID: ${answer.error_description.split(/\r?\n/)[0]!.replace(/ Trace ID: .*$/, '')}`, typeof answer.error === 'string' ? answer.error : 'error');
    }
  } catch {
    // not JSON: the status says enough
  }
  return new AzureRefusal(status, `Entra ID answered HTTP ${status}`);
}

/** The run's end in words: the operation's outcome, the power state before and at the end. */
function ending(spec: CloudSpec, before: string, final: Progress, seconds: string): RunEnd {
  const { call, target } = OPERATIONS[spec.operation];
  const change = `${before} → ${final.power}`;
  if (final.error) return { state: 'failed', reason: `Azure ${call} on ${spec.instanceId}: the operation ${final.operation} after ${seconds} s (${change}): ${final.error}` };
  if (final.operation !== 'succeeded' || final.power !== target) {
    const running = final.operation === 'running' ? ', the operation still running' : '';
    return { state: 'failed', reason: `Azure ${call} on ${spec.instanceId}: ${change} after ${seconds} s, not ${target}${running} (timeoutSeconds ${spec.waitSeconds})` };
  }
  return { state: 'succeeded', reason: `${VERBS[spec.operation]} ${spec.instanceId} (Azure ${call}): ${change} after ${seconds} s` };
}

/** ARM's refusals (RestError with a status) as providerError reads them; anything else as it is. */
function refusalOf(error: unknown): unknown {
  if (isRestError(error) && error.statusCode !== undefined) return new AzureRefusal(error.statusCode, error.message, error.code ?? 'error');
  return error;
}

/** The VM an instance id names: its resource id, or resourceGroup/vmName in the credential's subscription. */
function vmRef(instanceId: string, subscriptionId: string): VmRef | undefined {
  const groups = AZURE_VM.exec(instanceId)?.groups;
  if (!groups) return undefined;
  if (groups.vm) return { subscriptionId: groups.subscription!, resourceGroup: groups.group!, name: groups.vm };
  return { subscriptionId, resourceGroup: groups.shortGroup!, name: groups.shortVm! };
}

/** The VM's PowerState/… code from its instance view; `deleted` once ARM no longer knows it, if `goneIsState`. */
async function powerState(vms: VirtualMachinesOperations, vm: VmRef, signal: AbortSignal, goneIsState: boolean): Promise<string> {
  try {
    const view = await vms.instanceView(vm.resourceGroup, vm.name, { abortSignal: signal });
    return view.statuses?.find((status) => status.code?.startsWith('PowerState/'))?.code ?? 'PowerState/unknown';
  } catch (error) {
    if (goneIsState && isRestError(error) && error.statusCode === 404) return 'deleted';
    throw error;
  }
}

/**
 * One read: the operation's status (core-lro polls its Azure-AsyncOperation URL, then its Location
 * once it succeeded), then the power state. A failed or cancelled operation ends the wait with
 * ARM's words; a refused read is thrown.
 */
async function progress(poller: Poller, vms: VirtualMachinesOperations, vm: VmRef, signal: AbortSignal): Promise<Progress> {
  let error: string | undefined;
  if (!poller.isDone) {
    try {
      await poller.poll({ abortSignal: signal });
    } catch (failure) {
      if (isRestError(failure) || signal.aborted) throw failure;
      error = (failure instanceof Error ? failure.message : String(failure)).replace(/^The long-running operation has failed\.\s*/, '');
    }
  }
  const status = poller.operationState?.status;
  const operation = status === 'succeeded' || status === 'failed' || status === 'canceled' ? status : 'running';
  return { operation, power: await powerState(vms, vm, signal, true), ...(error ? { error } : {}) };
}

/** Node's CAs and those of NODE_EXTRA_CA_CERTS where Node can say (22.15+), else its bundled ones. */
function defaultCertificates(): string[] {
  const withExtra = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  return withExtra ? withExtra('default') : [...tls.rootCertificates];
}

/** The entry under `key`, made if missing, now the most recently used; the oldest dropped past KEPT. */
function kept<T>(map: Map<string, T>, key: string, make: () => T): T {
  const value = map.get(key) ?? make();
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= KEPT) break;
    map.delete(oldest);
  }
  return value;
}
