import type { SwaggerOptions } from '@fastify/swagger';

export function openApiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'pitcrew',
        version: '1',
        description: 'Remediation automation: webhook triggers in, configured actions out. Errors are application/problem+json (RFC 9457).',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'management token (pitcrew bootstrap --json)' } },
      },
    },
    // Shared schemas keep their $id as their component name (Problem, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  };
}
