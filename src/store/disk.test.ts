import { describe, expect, it } from 'vitest';
import { diskLevel, sized, thresholdBytes } from './disk.js';

const MiB = 1024 * 1024;

describe('diskLevel', () => {
  const total = 100 * MiB;
  it('is full below the reserve, low below the warning, ok above both', () => {
    const warn = { percent: 10 };
    const reserve = { bytes: 2 * MiB };
    expect(diskLevel({ freeBytes: 50 * MiB, totalBytes: total }, warn, reserve)).toBe('ok');
    expect(diskLevel({ freeBytes: 10 * MiB, totalBytes: total }, warn, reserve)).toBe('ok');
    expect(diskLevel({ freeBytes: 10 * MiB - 1, totalBytes: total }, warn, reserve)).toBe('low');
    expect(diskLevel({ freeBytes: 2 * MiB, totalBytes: total }, warn, reserve)).toBe('low');
    expect(diskLevel({ freeBytes: 2 * MiB - 1, totalBytes: total }, warn, reserve)).toBe('full');
    expect(diskLevel({ freeBytes: 0, totalBytes: total }, warn, reserve)).toBe('full');
  });

  it('reads a share against the file system and a size as it is', () => {
    expect(thresholdBytes({ percent: 5 }, 200 * MiB)).toBe(10 * MiB);
    expect(thresholdBytes({ bytes: 123 }, 200 * MiB)).toBe(123);
  });
});

describe('sized', () => {
  it('says sizes as people read them', () => {
    expect(sized(512)).toBe('512 bytes');
    expect(sized(1536)).toBe('1.5 KiB');
    expect(sized(48.2 * MiB)).toBe('48 MiB');
    expect(sized(1.4 * 1024 * MiB)).toBe('1.4 GiB');
  });
});
