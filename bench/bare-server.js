// The baseline of the ingest benchmark: a bare Fastify 5 app with one POST route on the same path
// shape as the webhook, parsing the same JSON body with Fastify's default parser and replying 202
// with a small JSON object of the same shape as pitcrew's reply. No storage, no auth, no logging:
// it is what "HTTP + JSON in + JSON out" costs on this machine, measured in the same run.
//
// Started by bench/run.js as a child process: PORT selects the port (127.0.0.1 only); it prints
// one line {"ready":true,"port":N} on stdout once it listens and exits on SIGTERM/SIGINT.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 0);
const app = Fastify({ logger: false });

app.post('/api/v1/trigger/channel/webhook/:apiKey/:triggerId', async (request, reply) => {
  const body = request.body;
  if (body === null || typeof body !== 'object') return reply.code(400).send({ error: 'body must be a JSON object' });
  const eventId = randomUUID();
  return reply
    .code(202)
    .header('Location', `/api/v1/events/${eventId}`)
    .send({ eventId, outcome: 'accepted', reason: null, executionIds: [], skippedEnv: [] });
});

const stop = () => {
  app.close().then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`${JSON.stringify({ ready: true, port: app.server.address().port })}\n`);
