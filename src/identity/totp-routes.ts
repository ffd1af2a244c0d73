import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import type { Database } from '../store/schema.js';
import { access } from './access.js';
import type { SecretBox } from './secret-box.js';
import { newTotpSecret, totpMatches, totpUri } from './totp.js';
import { findUser } from './users.js';

const tags = ['identity'];
const Code = Type.String({ pattern: '^\\s*\\d{6}\\s*$', description: 'the 6-digit code the authenticator app shows now' });

/** The optional second factor (TOTP, RFC 6238) of the signed-in person's own account. */
export function registerTotpRoutes(app: Api, { db, box, clock }: { db: Kysely<Database>; box: SecretBox; clock: () => number }): void {
  app.post('/me/totp', {
    schema: {
      tags, ...access('viewer'), summary: 'Start setting up a second factor: a new secret for your authenticator app (nothing changes until you confirm it)',
      response: { 200: Type.Object({ secret: Type.String(), otpauthUrl: Type.String({ description: 'otpauth:// URI, for a QR code' }) }), ...problems(401) },
    },
  }, async (request) => {
    const user = (await findUser(db, request.principal.userId))!;
    const secret = newTotpSecret();
    return { secret, otpauthUrl: totpUri(secret, user.email ?? user.id) };
  });

  app.put('/me/totp', {
    schema: {
      tags, ...access('viewer'), summary: 'Confirm the second factor with a code from the app: from now on sign-in asks for a code',
      body: Type.Object({ secret: Type.String({ pattern: '^[A-Z2-7]{32}$' }), code: Code }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...problems(400, 401) },
    },
  }, async (request, reply) => {
    if (!totpMatches(request.body.secret, request.body.code, clock())) throw wrongCode();
    await db.updateTable('users').set({ totp_secret: box.seal(request.body.secret, request.principal.userId) }).where('id', '=', request.principal.userId).execute();
    reply.code(204);
  });

  app.delete('/me/totp', {
    schema: {
      tags, ...access('viewer'), summary: 'Remove your second factor (a current code proves you still hold it)',
      body: Type.Object({ code: Code }, { additionalProperties: false }), response: { 204: Type.Null(), ...problems(400, 401) },
    },
  }, async (request, reply) => {
    const user = (await findUser(db, request.principal.userId))!;
    if (!user.totp_secret) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'your account has no second factor to remove');
    if (!totpMatches(box.open(user.totp_secret, user.id), request.body.code, clock())) throw wrongCode();
    await db.updateTable('users').set({ totp_secret: null }).where('id', '=', user.id).execute();
    reply.code(204);
  });
}

function wrongCode(): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', "the code does not match: type the one your authenticator app shows now (check the phone's clock is right)", { fieldErrors: [{ path: '/body/code', message: 'does not match' }] });
}
