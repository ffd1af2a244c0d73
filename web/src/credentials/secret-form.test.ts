import { describe, expect, it } from 'vitest';
import { placeFieldErrors } from '../api/problem';
import { credentialFieldOf, emptySecret, missingSecretFields, toSecret } from './secret-form';

describe('the credential secret form', () => {
  it('starts blank with the fields of the provider', () => {
    expect(emptySecret('aws')).toEqual({ accessKeyId: '', secretAccessKey: '', sessionToken: '', roleArn: '', externalId: '' });
    expect(emptySecret('gcp')).toEqual({ serviceAccountJson: '' });
  });

  it('sends the fields trimmed, leaving out the optional ones left blank', () => {
    const values = { ...emptySecret('aws'), accessKeyId: ' AKIAI44QH8DHBEXAMPLE\n', secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY ' };
    expect(toSecret('aws', values)).toEqual({ accessKeyId: 'AKIAI44QH8DHBEXAMPLE', secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY' });
    expect(toSecret('openstack', { ...emptySecret('openstack'), authUrl: 'https://k/v3', region: 'RegionOne' })).toEqual({
      authUrl: 'https://k/v3', applicationCredentialId: '', applicationCredentialSecret: '', region: 'RegionOne',
    });
  });

  it('names the required fields still blank', () => {
    expect(missingSecretFields('azure', { ...emptySecret('azure'), tenantId: 't', clientSecret: ' ' })).toEqual({
      clientId: 'enter the client id', clientSecret: 'enter the client secret', subscriptionId: 'enter the subscription id',
    });
    expect(missingSecretFields('aws', { ...emptySecret('aws'), accessKeyId: 'A', secretAccessKey: 'S' })).toEqual({});
  });

  it('places the service field errors at the fields of the secret', () => {
    const { errors, unplaced } = placeFieldErrors([
      { path: '/body/secret/secretAccessKey', message: 'must NOT have fewer than 16 characters' },
      { path: '/body/name', message: 'already used by another credential' },
      { path: '/body/secret', message: 'must NOT have additional properties' },
    ], credentialFieldOf);
    expect(errors).toEqual({ secretAccessKey: 'must NOT have fewer than 16 characters', name: 'already used by another credential' });
    expect(unplaced).toEqual([{ path: '/body/secret', message: 'must NOT have additional properties' }]);
  });
});
