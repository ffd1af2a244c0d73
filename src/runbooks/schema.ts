import { Type, type Static } from 'typebox';

/*
 * The runbook store's contract (DESIGN.md §7, docs/runbooks.md): at once the API validation, the
 * OpenAPI document and the TypeScript types. What a schema cannot say (a script of blanks, names a
 * runbook may not take) is checked in validate.ts.
 */

/** The interpreters a runbook runs with: the same as a rule's inline runbook (rules/schema.ts). */
export const INTERPRETERS = ['sh', 'bash', 'python', 'pwsh'] as const;
export type Interpreter = (typeof INTERPRETERS)[number];
export const DEFAULT_INTERPRETER: Interpreter = 'sh';

/** As a rule's inline runbook script (rules/schema.ts ScriptText): 256 Ki characters. */
export const MAX_SCRIPT_LENGTH = 256 * 1024;
/** A runbook receives at most 1000 variables (ingress/env.ts MAX_ENV_VARIABLES). */
const MAX_ENV_NAMES = 1000;

const Name = Type.String({ minLength: 1, maxLength: 200, description: "unique in the tenant, not only blanks (leading and trailing blanks are dropped)" });
const Time = Type.String({ format: 'date-time' });
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: "hex SHA-256 of the script's UTF-8 bytes" });
const VersionNumber = Type.Integer({ minimum: 1, description: 'versions count from 1; every save that changes something adds one' });
const CreatedBy = Type.Union([Type.String(), Type.Null()], { description: 'who saved it: the id of the personal access token of the call, or of the user signed in to the UI; null when unknown' });

export const RunbookInput = Type.Object(
  {
    name: Name,
    description: Type.Optional(Type.String({ maxLength: MAX_SCRIPT_LENGTH, description: 'notes for people (Markdown): when to run it, what it does, how to tell it worked; default empty' })),
    interpreter: Type.Optional(Type.Enum([...INTERPRETERS], { description: `default ${DEFAULT_INTERPRETER}` })),
    script: Type.String({ minLength: 1, maxLength: MAX_SCRIPT_LENGTH, description: 'the script run, kept byte for byte' }),
    env: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      maxItems: MAX_ENV_NAMES, uniqueItems: true,
      description: 'the environment variables the script expects from the trigger (HostName, a MetaData key…): shell identifiers, none that changes how the process runs (PATH, LD_*…); default none',
    })),
  },
  { additionalProperties: false },
);

const versionFields = {
  version: VersionNumber,
  name: Type.String(),
  description: Type.String(),
  interpreter: Type.Enum([...INTERPRETERS]),
  script: Type.String(),
  env: Type.Array(Type.String()),
  sha256: Sha256,
};

/** A runbook with its latest version whole (GET /runbooks/{id}). */
export const RunbookView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ...versionFields,
  createdAt: Time,
  createdBy: CreatedBy,
  updatedAt: Type.String({ format: 'date-time', description: 'when the latest version was saved' }),
  updatedBy: CreatedBy,
});

/** The reply to a save: the runbook, and whether the save made a new version. */
export const RunbookSaved = Type.Object({
  ...RunbookView.properties,
  versionCreated: Type.Boolean({ description: 'false when the body equalled the latest version: nothing was saved and `version` is that version' }),
});

/** A runbook in a list: its latest version without the script and the notes. */
export const RunbookSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  version: VersionNumber,
  interpreter: Type.Enum([...INTERPRETERS]),
  env: Type.Array(Type.String()),
  sha256: Sha256,
  createdAt: Time,
  updatedAt: Time,
});

/** One version, whole (GET /runbooks/{id}/versions/{n}). */
export const RunbookVersionView = Type.Object({
  runbookId: Type.String({ format: 'uuid' }),
  ...versionFields,
  createdAt: Time,
  createdBy: CreatedBy,
});

/** A version in the history list: without the script and the notes (the sha256 tells scripts apart). */
export const RunbookVersionSummary = Type.Object({
  version: VersionNumber,
  name: Type.String(),
  interpreter: Type.Enum([...INTERPRETERS]),
  env: Type.Array(Type.String()),
  sha256: Sha256,
  createdAt: Time,
  createdBy: CreatedBy,
});

/** The fields a diff compares, in the order it lists them. */
export const DIFF_FIELDS = ['name', 'description', 'interpreter', 'env', 'script'] as const;

export const RunbookDiffView = Type.Object({
  runbookId: Type.String({ format: 'uuid' }),
  from: VersionNumber,
  to: VersionNumber,
  changed: Type.Array(Type.Enum([...DIFF_FIELDS]), { description: 'the fields that differ between the two versions' }),
  diff: Type.String({ description: "the scripts' unified diff (3 lines of context, headers `--- version N` and `+++ version M`); empty when the scripts are equal" }),
});

export type RunbookInput = Static<typeof RunbookInput>;
export type RunbookView = Static<typeof RunbookView>;
export type RunbookSaved = Static<typeof RunbookSaved>;
export type RunbookSummary = Static<typeof RunbookSummary>;
export type RunbookVersionView = Static<typeof RunbookVersionView>;
export type RunbookVersionSummary = Static<typeof RunbookVersionSummary>;
export type RunbookDiffView = Static<typeof RunbookDiffView>;
export type DiffField = (typeof DIFF_FIELDS)[number];
