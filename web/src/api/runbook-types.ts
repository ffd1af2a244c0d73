/*
 * The shapes of the runbook store's API (docs/runbooks.md) that the UI reads and sends: every save
 * is an immutable version; a save equal to the latest makes none (`versionCreated: false`).
 */
import type { Interpreter } from './types';

export interface RunbookInput {
  name: string;
  /** Notes for people, Markdown. */
  description?: string;
  interpreter?: Interpreter;
  script: string;
  /** The environment variables the script expects from the trigger. */
  env?: string[];
}

/** A runbook at its latest version, whole. */
export interface RunbookView {
  id: string;
  version: number;
  name: string;
  description: string;
  interpreter: Interpreter;
  script: string;
  env: string[];
  /** Hex SHA-256 of the script's UTF-8 bytes, as `sha256sum` gives it. */
  sha256: string;
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
  updatedBy: string | null;
}

export interface RunbookSaved extends RunbookView {
  /** false: the body equalled the latest version, nothing was saved. */
  versionCreated: boolean;
}

/** A runbook in the list: its latest version without the script and the notes. */
export interface RunbookSummary {
  id: string;
  name: string;
  version: number;
  interpreter: Interpreter;
  env: string[];
  sha256: string;
  createdAt: string;
  updatedAt: string;
}

/** One version, whole. */
export interface RunbookVersionView {
  runbookId: string;
  version: number;
  name: string;
  description: string;
  interpreter: Interpreter;
  script: string;
  env: string[];
  sha256: string;
  createdAt: string;
  createdBy: string | null;
}

/** A version in the history: without the script and the notes. */
export type RunbookVersionSummary = Omit<RunbookVersionView, 'runbookId' | 'description' | 'script'>;

export const DIFF_FIELDS = ['name', 'description', 'interpreter', 'env', 'script'] as const;
export type DiffField = (typeof DIFF_FIELDS)[number];

export interface RunbookDiff {
  runbookId: string;
  from: number;
  to: number;
  /** The fields that differ, in DIFF_FIELDS order; empty when the versions are the same. */
  changed: DiffField[];
  /** The scripts' unified diff (`--- version N`, `+++ version M`); empty when the scripts are equal. */
  diff: string;
}

/** A runbook of the starter library shipped with pitcrew (GET /runbook-library), without its script. */
export interface LibraryItem {
  slug: string;
  /** The name it is installed under unless another is given. */
  name: string;
  description: string;
  interpreter: Interpreter;
  env: string[];
  sha256: string;
}
