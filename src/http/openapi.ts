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
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'personal access token (POST /api/v1/tokens; npx pitcrew bootstrap --json prints the first owner\'s)' },
          sessionCookie: {
            type: 'apiKey', in: 'cookie', name: 'pitcrew_session',
            description: "the web UI's session (POST /api/v1/auth/login); state-changing calls also send its CSRF token in the x-pitcrew-csrf header. __Host-pitcrew_session over HTTPS",
          },
          apiKey: { type: 'http', scheme: 'bearer', description: 'tenant API key (agent enrolment)' },
        },
      },
    },
    // @fastify/swagger marks every body required; the webhook's is optional (DESIGN.md §3).
    transformObject: (documents) => {
      const spec = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      for (const [path, item] of Object.entries(spec.paths ?? {})) {
        const requestBody = (item as { post?: { requestBody?: { required?: boolean } } }).post?.requestBody;
        if (path.includes('/trigger/channel/webhook/') && requestBody) requestBody.required = false;
      }
      return spec;
    },
    // Shared schemas keep their $id as their component name (Problem, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  };
}
