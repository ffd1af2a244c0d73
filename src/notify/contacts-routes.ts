import { problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { getContacts, presentContacts, putContacts } from './contacts.js';
import { ContactsInput, ContactsView } from './schema.js';
import type { Database } from '../store/schema.js';

const tags = ['escalation-contacts'];

/** Who hears escalations (an action limit reached) and receives email runbooks. */
export function registerContactRoutes(app: Api, db: Kysely<Database>): void {
  app.get('/escalation-contacts', {
    schema: { tags, ...access('viewer'), summary: "The tenant's escalation contacts", response: { 200: ContactsView, ...problems(401) } },
  }, async (request) => presentContacts(await getContacts(db, request.principal.tenantId)));

  app.put('/escalation-contacts', {
    schema: {
      tags, ...access('admin'), summary: 'Replace the escalation contacts: on-call email addresses and channels',
      body: ContactsInput, response: { 200: ContactsView, ...problems(400, 401) },
    },
  }, async (request) => {
    await putContacts(db, request.principal.tenantId, request.body);
    return presentContacts(await getContacts(db, request.principal.tenantId));
  });
}
