import { Type, type Static } from 'typebox';
import { INTERPRETERS } from '../schema.js';

/* The runbook library's contract (docs/runbooks.md#starter-library): validation, OpenAPI and types at once. */

const Slug = Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100, description: 'the library runbook: disk-cleanup, restart-service, …' });

// Any text: a slug not in the library is a 404 that lists the library's slugs.
export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100 }) });

/** A library runbook in the list: everything but its script. */
export const LibraryItem = Type.Object({
  slug: Slug,
  name: Type.String({ description: 'the name it is installed under unless another is given' }),
  description: Type.String({ description: 'notes for people (Markdown): when to use it, the variables it reads and their defaults, what it changes, how to tell it worked' }),
  interpreter: Type.Enum([...INTERPRETERS]),
  env: Type.Array(Type.String(), { description: 'the variables it reads (webhook fields or MetaData keys)' }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: "hex SHA-256 of the script's UTF-8 bytes: the installed runbook's sha256" }),
});

/** A library runbook whole (GET /runbook-library/{slug}). */
export const LibraryEntryView = Type.Object({ ...LibraryItem.properties, script: Type.String() });

export const InstallInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the runbook's name in the tenant's store; default the library runbook's name" })),
  },
  { additionalProperties: false },
);

export type LibraryItem = Static<typeof LibraryItem>;
export type LibraryEntryView = Static<typeof LibraryEntryView>;
export type InstallInput = Static<typeof InstallInput>;
