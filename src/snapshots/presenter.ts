import { Type, type Static } from 'typebox';
import type { SnapshotMeta } from './repository.js';

export const SnapshotView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String({ description: 'what was drawn: the alert and its query, or the rule’s graph' }),
  query: Type.String(),
  contentType: Type.String({ description: 'image/png, or image/svg+xml' }),
  width: Type.Integer(),
  height: Type.Integer(),
  bytes: Type.Integer(),
  executionId: Type.String({ format: 'uuid', description: 'the graph_snapshot execution that captured it' }),
  eventId: Type.String({ format: 'uuid' }),
  url: Type.String({ description: 'the image: GET with the management API’s authentication' }),
});
export type SnapshotView = Static<typeof SnapshotView>;

export function presentSnapshot(row: SnapshotMeta): SnapshotView {
  return { id: row.id, title: row.title, query: row.query, contentType: row.content_type, width: row.width, height: row.height, bytes: row.bytes, executionId: row.execution_id, eventId: row.event_id, url: `/api/v1/snapshots/${row.id}` };
}
