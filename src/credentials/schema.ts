import { Type, type Static, type TObject } from 'typebox';

/** The clouds a credential can be for (DESIGN.md §7). */
export const PROVIDERS = ['aws', 'azure', 'gcp', 'openstack'] as const;
export type Provider = (typeof PROVIDERS)[number];

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Uuid = Type.String({ format: 'uuid' });
const Text = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });

/** Each provider's secret as its SDK takes it; write-only: stored sealed, never returned. */
export const SECRET_SCHEMAS = {
  aws: Type.Object({
    accessKeyId: Type.String({ pattern: '^[A-Z0-9]{16,128}$', description: 'an IAM access key id (AKIA…, or ASIA… with a session token)' }),
    secretAccessKey: Type.String({ minLength: 16, maxLength: 256 }),
    sessionToken: Type.Optional(Text(4096, 'for temporary credentials')),
    roleArn: Type.Optional(Type.String({ pattern: '^arn:aws[a-z-]*:iam::\\d{12}:role/.+$', maxLength: 2048, description: 'a role to assume with the keys (sts:AssumeRole): cloud actions act with its temporary credentials, and CLI runbooks get them (never the keys)' })),
    externalId: Type.Optional(Type.String({ minLength: 2, maxLength: 1224 })),
  }, { additionalProperties: false }),
  azure: Type.Object({
    tenantId: Uuid,
    clientId: Uuid,
    clientSecret: Text(1024, "the service principal's client secret"),
    subscriptionId: Uuid,
  }, { additionalProperties: false }),
  gcp: Type.Object({
    serviceAccountJson: Text(16_384, "the service account's JSON key file, as Google gives it"),
  }, { additionalProperties: false }),
  openstack: Type.Object({
    authUrl: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'the Keystone v3 URL, e.g. https://keystone.example.com:5000/v3' }),
    applicationCredentialId: Text(256, 'an application credential id'),
    applicationCredentialSecret: Text(1024, 'its secret'),
    region: Type.Optional(Text(255, 'the region to act in')),
  }, { additionalProperties: false }),
} satisfies Record<Provider, TObject>;

export type Secret<P extends Provider = Provider> = Static<(typeof SECRET_SCHEMAS)[P]>;

const variant = <P extends Provider>(provider: P) => Type.Object({ name: Name, provider: Type.Literal(provider), secret: SECRET_SCHEMAS[provider] }, { additionalProperties: false });

/** Told apart by `provider` (Ajv's discriminator): an error names the fields of that provider's secret. */
export const CredentialInput = Type.Unsafe<Static<ReturnType<typeof variant<Provider>>>>({
  type: 'object',
  required: ['provider'],
  discriminator: { propertyName: 'provider' },
  oneOf: PROVIDERS.map(variant),
});

export const CredentialPatch = Type.Object({
  name: Type.Optional(Name),
  secret: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "a new secret, whole, in the credential's provider's shape (write-only)" })),
}, { additionalProperties: false, minProperties: 1 });

const Time = Type.String({ format: 'date-time' });

export const CredentialView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  provider: Type.Enum([...PROVIDERS]),
  summary: Type.Record(Type.String(), Type.String(), { description: "what identifies the secret without revealing it: the access key id masked, the service account's email…" }),
  lastTest: Type.Union([Type.Object({ at: Time, ok: Type.Boolean(), message: Type.String() }), Type.Null()]),
  createdAt: Time,
  updatedAt: Time,
});

export const CredentialTestView = Type.Object({
  ok: Type.Literal(true),
  call: Type.String({ description: 'the harmless read made, e.g. ec2:DescribeRegions' }),
  message: Type.String(),
  durationMs: Type.Integer(),
});

export type CredentialInput = Static<typeof CredentialInput>;
export type CredentialPatch = Static<typeof CredentialPatch>;
export type CredentialView = Static<typeof CredentialView>;
export type CredentialTestView = Static<typeof CredentialTestView>;

/** What "test credential" learned: the call made and the provider's answer in words. */
export interface ProbeResult {
  call: string;
  message: string;
}

/** One harmless read at the provider with a secret (actions/cloud/: each provider's probe); throws a PitcrewError. */
export type Probe = (provider: Provider, secret: Secret) => Promise<ProbeResult>;
