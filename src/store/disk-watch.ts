import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../metrics/registry.js';
import type { FreeSpace } from '../config/config.js';
import { diskLevel, readDisk, sized, thresholdBytes, type DiskLevel, type DiskReading } from './disk.js';

export interface DiskWatchSettings {
  /** The data directory: its file system is watched. */
  dir: string;
  /** PITCREW_DISK_WARN_FREE: below it, a warning (log line and metric). */
  warnFree: FreeSpace;
  /** PITCREW_DISK_RESERVE: below it, events are refused before anything is written. */
  reserve: FreeSpace;
}

/** How old a reading may be when a webhook asks: statfs is a system call, not free on every request. */
const FRESH_MS = 1000;
/**
 * What the disk may lose per byte of a body taken: the event's row in the WAL, then in the
 * database at the checkpoint, and the indexes of both. Bodies taken since the last reading, times
 * this, that could reach the reserve make the next call read the disk again at once: a burst fills
 * a small disk well within a second.
 */
const WRITE_AMPLIFICATION = 4;

/**
 * The data directory's free space (docs/operations.md, "A full disk"). Below the warning
 * threshold it says so once in the log and in `pitcrew_data_dir_low_space`; below the reserve,
 * webhooks and alerts are answered 503 before anything is written (SQLite never meets a full disk
 * in the middle of a commit), and the readiness probe says why; once space is freed, all of it
 * ends by itself at the next reading.
 */
export class DiskWatch {
  private level: DiskLevel = 'ok';
  private reading: DiskReading | undefined;
  private readAt = -Infinity;
  /** Bytes of bodies taken since the last reading. */
  private takenSince = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: DiskWatchSettings,
    private readonly deps: { logger: FastifyBaseLogger; metrics: Metrics; clock?: () => number; read?: (dir: string) => DiskReading },
  ) {}

  start(intervalMs = 5000): void {
    this.refresh(0);
    this.timer = setInterval(() => this.refresh(0), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Why nothing may be written now, in words for the caller; undefined while there is room. `incomingBytes`: the body about to be taken. */
  refusal(incomingBytes = 0): string | undefined {
    this.takenSince += incomingBytes;
    const room = this.reading ? this.reading.freeBytes - thresholdBytes(this.settings.reserve, this.reading.totalBytes) : 0;
    this.refresh(this.takenSince * WRITE_AMPLIFICATION >= room ? 0 : FRESH_MS);
    if (this.level !== 'full' || !this.reading) return undefined;
    return `the data directory's disk (${this.settings.dir}) has ${sized(this.reading.freeBytes)} free, below its reserve of ${sized(thresholdBytes(this.settings.reserve, this.reading.totalBytes))} (PITCREW_DISK_RESERVE): nothing is written until its operator frees space`;
  }

  private refresh(maxAgeMs: number): void {
    const now = (this.deps.clock ?? Date.now)();
    if (now - this.readAt < maxAgeMs) return;
    let reading: DiskReading;
    try {
      reading = (this.deps.read ?? readDisk)(this.settings.dir);
    } catch (error) {
      this.deps.logger.warn({ err: error, dir: this.settings.dir }, 'the data directory\'s free space could not be read');
      return;
    }
    this.readAt = now;
    this.reading = reading;
    this.takenSince = 0;
    const level = diskLevel(reading, this.settings.warnFree, this.settings.reserve);
    const { metrics } = this.deps;
    metrics.dataDirFreeBytes.set(reading.freeBytes);
    metrics.dataDirLowSpace.set(level === 'ok' ? 0 : 1);
    metrics.dataDirFull.set(level === 'full' ? 1 : 0);
    if (level !== this.level) this.said(this.level, level, reading);
    this.level = level;
  }

  private said(from: DiskLevel, to: DiskLevel, reading: DiskReading): void {
    const { logger } = this.deps;
    const { dir, warnFree, reserve } = this.settings;
    const free = `${sized(reading.freeBytes)} free (${((100 * reading.freeBytes) / Math.max(1, reading.totalBytes)).toFixed(1)} %)`;
    const fields = { dir, freeBytes: reading.freeBytes, totalBytes: reading.totalBytes };
    if (to === 'full') {
      logger.error(fields, `the data directory's disk (${dir}) has ${free}, below its reserve of ${sized(thresholdBytes(reserve, reading.totalBytes))} (PITCREW_DISK_RESERVE): webhooks and alerts are answered 503 until space is freed. Free space there, or delete old history with PITCREW_RETENTION_DAYS`);
    } else if (to === 'low') {
      logger.warn(fields, `the data directory's disk (${dir}) has ${free}, below PITCREW_DISK_WARN_FREE (${sized(thresholdBytes(warnFree, reading.totalBytes))}): free space soon; below ${sized(thresholdBytes(reserve, reading.totalBytes))} webhooks are answered 503`);
    } else if (from !== 'ok') {
      logger.info(fields, `the data directory's disk (${dir}) has ${free} again`);
    }
  }
}
