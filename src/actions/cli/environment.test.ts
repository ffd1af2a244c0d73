import { describe, expect, it } from 'vitest';
import { cliEnvironment } from './environment.js';

const settings = { path: '/usr/bin:/bin', awsEndpoint: undefined };
const HOME = '/tmp/pitcrew-cli-x';

describe('the environment of a CLI runbook', () => {
  it('is a clean base, the payload, the context and each credential in its CLI’s own variables', () => {
    const out = cliEnvironment(HOME, settings, { HostName: 'web-1' }, { PITCREW_EXECUTION_ID: 'e1' }, [
      { name: 'a', provider: 'aws', secret: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } },
      { name: 'o', provider: 'openstack', secret: { authUrl: 'https://keystone.example.com:5000/v3', applicationCredentialId: 'ac1', applicationCredentialSecret: 'secret-of-ac1', region: 'RegionOne' } },
    ]);
    expect(out.env).toMatchObject({
      PATH: '/usr/bin:/bin', HOME, TMPDIR: `${HOME}/tmp`, HostName: 'web-1', PITCREW_EXECUTION_ID: 'e1',
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', AWS_EC2_METADATA_DISABLED: 'true',
      OS_AUTH_TYPE: 'v3applicationcredential', OS_APPLICATION_CREDENTIAL_SECRET: 'secret-of-ac1', OS_REGION_NAME: 'RegionOne',
    });
    expect(out.files).toEqual([]);
    expect(out.secrets).toEqual(expect.arrayContaining(['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'secret-of-ac1']));
  });

  it('gives a role’s temporary credentials the service assumed, never the stored keys, and masks both', () => {
    const secret = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', roleArn: 'arn:aws:iam::123456789012:role/fixer', externalId: 'ext-1' };
    const assumed = { accessKeyId: 'ASIAIOSFODNN7TEMPKEY', secretAccessKey: 'tempSecretKey/0123456789abcdefTEMP', sessionToken: 'FwoGZXIvYXdzEXAMPLETOKEN' };
    const out = cliEnvironment(HOME, settings, {}, {}, [{ name: 'a', provider: 'aws', secret, assumed }]);
    expect(out.env).toMatchObject({ AWS_ACCESS_KEY_ID: assumed.accessKeyId, AWS_SECRET_ACCESS_KEY: assumed.secretAccessKey, AWS_SESSION_TOKEN: assumed.sessionToken });
    expect(Object.values(out.env)).not.toContain(secret.secretAccessKey);
    expect(out.files).toEqual([]);
    expect(out.secrets).toEqual(expect.arrayContaining([secret.secretAccessKey, 'ext-1', assumed.secretAccessKey, assumed.sessionToken]));
  });

  it('takes no payload name that would point a CLI or its credentials elsewhere', () => {
    const payload = { AWS_ENDPOINT_URL: 'http://evil', OS_AUTH_URL: 'http://evil', REQUESTS_CA_BUNDLE: '/tmp/ca', KUBECONFIG: '/tmp/k', GOOGLE_APPLICATION_CREDENTIALS: '/etc/x', PITCREW_RULE_ID: 'forged', Region: 'eu-west-1' };
    const out = cliEnvironment(HOME, settings, payload, {}, []);
    expect(out.skipped.sort()).toEqual(['AWS_ENDPOINT_URL', 'GOOGLE_APPLICATION_CREDENTIALS', 'KUBECONFIG', 'OS_AUTH_URL', 'PITCREW_RULE_ID', 'REQUESTS_CA_BUNDLE']);
    expect(out.env.Region).toBe('eu-west-1');
    expect(Object.keys(out.env)).not.toContain('AWS_ENDPOINT_URL');
  });

  it('writes a GCP key file and masks each line of its private key', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n';
    const json = JSON.stringify({ type: 'service_account', project_id: 'ops-1', private_key_id: 'k1234567', private_key: pem, client_email: 'fixer@ops-1.iam.gserviceaccount.com' });
    const out = cliEnvironment(HOME, settings, {}, {}, [{ name: 'g', provider: 'gcp', secret: { serviceAccountJson: json } }]);
    expect(out.files).toEqual([{ path: '.config/gcloud/service-account.json', content: json }]);
    expect(out.env).toMatchObject({ GOOGLE_APPLICATION_CREDENTIALS: `${HOME}/.config/gcloud/service-account.json`, CLOUDSDK_CORE_PROJECT: 'ops-1' });
    expect(out.secrets).toEqual(expect.arrayContaining(['MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 'BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj', 'k1234567']));
  });

  it('gives the operator’s EC2 and STS endpoints to the AWS CLI: its variables, and the shim first on PATH for CLIs before 2.13', () => {
    const out = cliEnvironment(HOME, { ...settings, awsEndpoint: 'https://ec2.vpce.example', awsStsEndpoint: 'https://sts.vpce.example' }, {}, {}, [{ name: 'a', provider: 'aws', secret: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } }]);
    expect(out.env).toMatchObject({ AWS_ENDPOINT_URL_EC2: 'https://ec2.vpce.example', AWS_ENDPOINT_URL_STS: 'https://sts.vpce.example', PATH: `${HOME}/.pitcrew/bin:/usr/bin:/bin` });
    expect(out.env).not.toHaveProperty('AWS_ENDPOINT_URL');
    expect(out.files).toEqual([{ path: '.pitcrew/bin/aws', content: expect.stringMatching(/^#!\/bin\/sh\n/), executable: true }]);
    expect(cliEnvironment(HOME, settings, {}, {}, [{ name: 'a', provider: 'aws', secret: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } }]).env.PATH).toBe('/usr/bin:/bin');
  });
});
