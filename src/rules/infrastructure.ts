import type { FastifyRequest } from 'fastify';
import { INFRASTRUCTURE_TYPES, type RuleBody } from './schema.js';

type InfrastructureType = (typeof INFRASTRUCTURE_TYPES)[number];

/**
 * The documented spelling (`On_Premise`, `CLOUD_EC2`) of an infrastructure type sent in any case
 * (`on_premise`, `cloud_ec2`): the seed's identifiers mix their cases, and nobody should have to
 * remember which. Anything else stays as it is, for the schema to refuse with the list.
 */
export function spelledInfrastructureType(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return INFRASTRUCTURE_TYPES.find((type) => type.toLowerCase() === value.toLowerCase()) ?? value;
}

/** A preValidation hook of the rule routes: the body's infrastructureType spelt as documented before the schema reads it. */
export async function spellInfrastructureType(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | null | undefined;
  if (typeof body === 'object' && body !== null && 'infrastructureType' in body) body.infrastructureType = spelledInfrastructureType(body.infrastructureType);
}

/**
 * A new rule's infrastructure type: the one it gives, else `On_Premise`, which only a cloud action
 * has a use for other than as a label. A cloud action acts on its cloud, so it must name it (validate.ts says how).
 */
export function withInfrastructureType(body: RuleBody): RuleBody {
  if (body.infrastructureType !== undefined || body.action.type === 'cloud') return body;
  return { ...body, infrastructureType: 'On_Premise' satisfies InfrastructureType };
}
