import type { RenderedGraph } from './render.js';

/** One graph, drawn by pitcrew or as the tool drew it, not yet stored (actions/snapshot/runner.ts). */
export interface CapturedImage extends RenderedGraph {
  title: string;
  query: string;
}

/** What the wizard's Preview captures: the fields of a graph_snapshot action, over the last windowMinutes. */
export interface SnapshotPreviewRequest {
  integrationId: string;
  graphs: string[];
  windowMinutes: number;
}
