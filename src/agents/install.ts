import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import { baseUrl, type Api } from '../http/types.js';
import { RELEASE_VERSION } from '../hosts/agent-version.js';

export const AGENT_DOWNLOAD_PATH = '/downloads/pitcrew-agent.mjs';
const FILE_NAME = 'pitcrew-agent.mjs';
/** Where docs/agent.md installs the agent, and deploy/pitcrew-agent.service runs it from. */
const INSTALLED_DIR = '/opt/pitcrew-agent';

const AgentInstallView = Type.Object({
  server: Type.String({ description: 'the URL agents connect to (--server): this service\'s HTTPS port' }),
  fingerprint: Type.String({ description: 'SHA-256 fingerprint of its TLS certificate (--server-fingerprint)' }),
  download: Type.Union([
    Type.Object({ url: Type.String(), sha256: Type.String(), size: Type.Integer() }),
    Type.Null(),
  ], { description: 'the agent file this service offers; null when the build made none' }),
  install: Type.String({ description: 'shell commands that fetch the agent file and check its digest' }),
  start: Type.String({ description: 'the command that starts the agent; it reads the tenant API key from $PITCREW_API_KEY' }),
  version: Type.String({ description: "this service's release, which its agent file is: a host whose agent is older is marked outdated" }),
  update: Type.String({ description: 'shell commands that replace an installed agent (docs/agent.md layout, systemd unit) with this file and restart it; its enrolment and state stay' }),
});

/** What the service offers hosts: made by the server, `endpoint` set once its HTTPS port is open. */
export interface AgentOffer {
  /** PITCREW_PUBLIC_URL, when set: the base of the download URL. */
  publicUrl: string | undefined;
  /** The bundled agent file, when the build made one. */
  bundle: string | undefined;
  endpoint: { port: number; fingerprint: string } | undefined;
}

interface BundleFacts {
  sha256: string;
  size: number;
}

/**
 * How a host joins this service: the agent file (served unauthenticated, like any download of
 * open software; its digest comes from the authenticated API), the URL and the certificate to pin.
 */
export function registerAgentInstallRoutes(app: Api, offer: AgentOffer): void {
  app.get('/agents/install', {
    schema: {
      tags: ['agents'], ...access('viewer'),
      summary: 'The exact commands that install and start an agent for this service',
      response: { 200: AgentInstallView, ...problems(401, 404) },
    },
  }, async (request) => {
    const endpoint = offer.endpoint;
    if (!endpoint) throw new PitcrewError('PITCREW_ERR_NOT_FOUND', 'this service process is not listening for agents (no HTTPS port is open)');
    const base = baseUrl(offer.publicUrl, request);
    const server = `https://${new URL(base).hostname}:${endpoint.port}`;
    const bundle = await bundleFacts(offer.bundle);
    const download = bundle && { url: base + AGENT_DOWNLOAD_PATH, ...bundle };
    const install = download
      ? `curl -fsSLo ${FILE_NAME} '${download.url}' && echo '${download.sha256}  ${FILE_NAME}' | sha256sum -c -`
      : `# copy dist/${FILE_NAME} from the service's build (npm run build:agent) to this host`;
    const start = `node ${FILE_NAME} --server ${server} --server-fingerprint ${endpoint.fingerprint}`;
    const replace = `sudo install -m 0755 ${FILE_NAME} ${INSTALLED_DIR}/ && sudo systemctl restart pitcrew-agent`;
    const update = download ? `${install} && ${replace}` : `${install}\n${replace}`;
    return { server, fingerprint: endpoint.fingerprint, download, install, start, version: RELEASE_VERSION, update };
  });
}

export function registerAgentDownloadRoute(app: Api, offer: AgentOffer): void {
  app.get(AGENT_DOWNLOAD_PATH, {
    schema: {
      tags: ['agents'], security: [],
      summary: 'The agent program, one file for Node.js 24, 22 or 20.19+ (check it against the sha256 of GET /api/v1/agents/install)',
      produces: ['text/javascript'], response: { ...problems(404) },
    },
  }, async (_request, reply) => {
    if (!(await bundleFacts(offer.bundle))) {
      throw new PitcrewError('PITCREW_ERR_NOT_FOUND', 'this service has no agent file to offer; build it with npm run build:agent');
    }
    return reply.type('text/javascript').header('Content-Disposition', `attachment; filename="${FILE_NAME}"`).send(fs.createReadStream(offer.bundle!));
  });
}

let cached: { file: string; mtimeMs: number; facts: BundleFacts } | undefined;

/** The bundle's digest, computed once per build of the file rather than per request. */
async function bundleFacts(file: string | undefined): Promise<BundleFacts | null> {
  if (!file) return null;
  const stat = await fs.promises.stat(file).catch(() => undefined);
  if (!stat?.isFile()) return null;
  if (cached?.file !== file || cached.mtimeMs !== stat.mtimeMs) {
    const content = await fs.promises.readFile(file);
    cached = { file, mtimeMs: stat.mtimeMs, facts: { sha256: createHash('sha256').update(content).digest('hex'), size: content.length } };
  }
  return cached.facts;
}
