import { DescribeRegionsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { PitcrewError } from '../errors/catalogue.js';
import type { Provider, Secret } from './schema.js';

export interface ProbeSettings {
  /** PITCREW_AWS_ENDPOINT_URL: an AWS-compatible endpoint instead of AWS's own. */
  awsEndpoint?: string | undefined;
}

export interface ProbeResult {
  call: string;
  message: string;
}

/** How long a provider may take to answer a test before it counts as unreachable. */
const TIMEOUT_MS = 10_000;

/**
 * "Test credential": one harmless read with the secret, as the actions will call the provider.
 * Resolves when the provider accepted it; throws a PitcrewError that says what the provider
 * answered (502) or that it did not answer (503). Never quotes a secret value.
 */
export async function probeCredential(provider: Provider, secret: Secret, settings: ProbeSettings): Promise<ProbeResult> {
  if (provider !== 'aws') {
    throw new PitcrewError('PITCREW_ERR_NOT_IMPLEMENTED', `testing ${provider} credentials comes with the ${provider} actions, which this version does not run yet; the credential is stored sealed and can be used once they do`);
  }
  const aws = secret as Secret<'aws'>;
  const client = new EC2Client({
    region: 'us-east-1',
    ...(settings.awsEndpoint ? { endpoint: settings.awsEndpoint } : {}),
    credentials: { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey, ...(aws.sessionToken ? { sessionToken: aws.sessionToken } : {}) },
    maxAttempts: 2,
    requestHandler: { connectionTimeout: TIMEOUT_MS, requestTimeout: TIMEOUT_MS },
  });
  try {
    const answer = await client.send(new DescribeRegionsCommand({}));
    const regions = answer.Regions?.length ?? 0;
    return { call: 'ec2:DescribeRegions', message: `AWS accepted the key: ${regions} region${regions === 1 ? '' : 's'} visible to it` };
  } catch (error) {
    throw providerError('AWS', 'ec2:DescribeRegions', error, [aws.secretAccessKey, aws.sessionToken, aws.accessKeyId]);
  } finally {
    client.destroy();
  }
}

/** The provider's refusal (an error it sent: a code and a message) or its silence, with any secret value blotted out. */
export function providerError(name: string, call: string, error: unknown, secrets: Array<string | undefined>): PitcrewError {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const message = redact(String(e.message ?? error), secrets);
  if (e.$metadata?.httpStatusCode !== undefined) {
    return new PitcrewError('PITCREW_ERR_PROVIDER_REFUSED', `${name} refused ${call}: ${e.name ?? 'error'} (HTTP ${e.$metadata.httpStatusCode}): ${message}`);
  }
  return new PitcrewError('PITCREW_ERR_PROVIDER_UNAVAILABLE', `${name} did not answer ${call}: ${message}; check the service's network access to the provider (or PITCREW_AWS_ENDPOINT_URL)`);
}

function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[REDACTED]');
  return out;
}
