// Imports between the folders of src/ flow one way (docs/architecture.md): `npm run lint` fails on
// a cycle between folders, type-only imports included. Cycles between files inside one folder are
// left to judgement; test/folder-cycles.test.ts shows this rule catches a new folder cycle.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment: 'Folders of src/ import each other in a loop. Move the shared piece down to the folder that owns it, or pass it in from server/ (see docs/architecture.md).',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    includeOnly: '^src/',
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
  },
};
