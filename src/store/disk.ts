import fs from 'node:fs';
import type { FreeSpace } from '../config/config.js';

export interface DiskReading {
  freeBytes: number;
  totalBytes: number;
}

/** Where the data directory's file system stands against the two thresholds. */
export type DiskLevel = 'ok' | 'low' | 'full';

export function thresholdBytes(threshold: FreeSpace, totalBytes: number): number {
  return 'bytes' in threshold ? threshold.bytes : Math.floor((totalBytes * threshold.percent) / 100);
}

/** Pure: `full` below the reserve (writes are refused before they start), `low` below the warning. */
export function diskLevel(reading: DiskReading, warnFree: FreeSpace, reserve: FreeSpace): DiskLevel {
  if (reading.freeBytes < thresholdBytes(reserve, reading.totalBytes)) return 'full';
  if (reading.freeBytes < thresholdBytes(warnFree, reading.totalBytes)) return 'low';
  return 'ok';
}

/** Free space as people read it: 312 KiB, 48.2 MiB, 1.4 GiB. */
export function sized(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function readDisk(dir: string): DiskReading {
  const stats = fs.statfsSync(dir);
  // bavail: what an unprivileged writer may still use (root keeps the reserved blocks).
  return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
}
