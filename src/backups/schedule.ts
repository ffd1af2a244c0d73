import fs from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../metrics/registry.js';
import type { Store } from '../store/database.js';
import { backupTo, IN_SERVICE_STEP, scheduledBackups, scheduledName } from './backup.js';

export interface BackupSchedule {
  /** PITCREW_BACKUP_SCHEDULE: cron syntax, in the service's time zone. */
  schedule: string;
  /** PITCREW_BACKUP_KEEP: the newest this many are kept, older ones deleted after each backup. */
  keep: number;
  /** PITCREW_BACKUP_DIR: where they go ($PITCREW_DATA_DIR/backups by default). */
  dir: string;
}

/**
 * The single node's backups on a schedule (docs/operations.md, "Backup and restore"): each a
 * consistent copy by SQLite's online backup through the service's own connection (its writes
 * update the copy as it goes, so it never restarts; a few pages between turns of the event loop,
 * so webhooks keep their answers), then the oldest beyond `keep` deleted. A run still going when
 * the next is due makes that one skip.
 */
export class ScheduledBackups {
  private readonly job: Cron;
  private running: Promise<void> | undefined;

  constructor(
    private readonly settings: BackupSchedule,
    private readonly deps: { store: Store; logger: FastifyBaseLogger; metrics: Metrics; clock?: () => number },
  ) {
    this.job = new Cron(settings.schedule, { paused: true, protect: true }, () => this.runOnce());
  }

  start(): void {
    fs.mkdirSync(this.settings.dir, { recursive: true });
    this.job.resume();
    const next = this.job.nextRun();
    this.deps.logger.info({ dir: this.settings.dir, keep: this.settings.keep, next: next?.toISOString() }, `backups on schedule "${this.settings.schedule}" into ${this.settings.dir}, the newest ${this.settings.keep} kept (PITCREW_BACKUP_SCHEDULE)`);
  }

  async stop(): Promise<void> {
    this.job.stop();
    await this.running;
  }

  /** One backup now, then the old ones pruned; never throws (a failure is logged and counted). */
  runOnce(): Promise<void> {
    this.running ??= this.backUp().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async backUp(): Promise<void> {
    const { store, logger, metrics } = this.deps;
    const at = (this.deps.clock ?? Date.now)();
    const target = path.join(this.settings.dir, scheduledName(at));
    try {
      const contents = await backupTo(store, target, IN_SERVICE_STEP);
      metrics.backupsTaken.inc({ outcome: 'ok' });
      metrics.backupLastSuccess.set(at / 1000);
      const pruned = this.prune();
      logger.info({ file: target, bytes: contents.bytes, events: contents.events, executions: contents.executions, schema: contents.schemaVersion, sealedWith: contents.sealedWith, pruned }, `backup written to ${target}`);
    } catch (error) {
      metrics.backupsTaken.inc({ outcome: 'failed' });
      logger.error({ err: error, file: target }, `the scheduled backup failed: ${(error as Error).message}`);
    }
  }

  private prune(): string[] {
    const old = scheduledBackups(this.settings.dir).slice(this.settings.keep);
    for (const file of old) fs.rmSync(file, { force: true });
    return old;
  }
}
