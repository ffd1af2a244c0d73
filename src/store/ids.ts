import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

// One system call fills randomness for ~400 ids: randomBytes per id cost 1.8 µs each, twice per id.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function random(bytes: number): Buffer {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += bytes;
  return pool.subarray(poolOffset - bytes, poolOffset);
}

/**
 * A UUIDv7 (RFC 9562): time-ordered, so ids sort by creation and serve as pagination cursors.
 * Within one millisecond a 12-bit counter in rand_a keeps ids from one process strictly increasing.
 * Written straight from the pool through a byte-to-hex table, with the time's part kept for the
 * millisecond: every event and execution takes one (bench/README.md, issue 41 item 4).
 */
export function newId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = random(2).readUInt16BE() & 0x3ff;
  } else {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
  }
  const at = randomAt(8);
  return `${timePart(lastMs)}${HEX[0x70 | (sequence >> 8)]}${HEX[sequence & 0xff]}-${HEX[0x80 | (pool[at]! & 0x3f)]}${HEX[pool[at + 1]!]}-`
    + `${HEX[pool[at + 2]!]}${HEX[pool[at + 3]!]}${HEX[pool[at + 4]!]}${HEX[pool[at + 5]!]}${HEX[pool[at + 6]!]}${HEX[pool[at + 7]!]}`;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
let timePartMs = -1;
let timePartText = '';

/** The id's first two groups, its 48-bit millisecond: "xxxxxxxx-xxxx-". */
function timePart(ms: number): string {
  if (ms !== timePartMs) {
    const hex = ms.toString(16).padStart(12, '0');
    timePartText = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-`;
    timePartMs = ms;
  }
  return timePartText;
}

/** Where `bytes` fresh random bytes start in the pool. */
function randomAt(bytes: number): number {
  random(bytes);
  return poolOffset - bytes;
}

/**
 * A UUIDv7 of a given time, past or present: its 74 random bits keep it apart from every other
 * id of that millisecond. For rows whose order is a time other than their creation (an incident
 * an import found is ordered by when it opened); unlike newId, ids of one millisecond made here
 * are not ordered among themselves.
 */
export function idAt(ms: number): string {
  const bytes = Buffer.allocUnsafe(16);
  random(10).copy(bytes, 6);
  bytes.writeUIntBE(Math.max(0, Math.floor(ms)), 0, 6);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The lowest UUIDv7 of millisecond `ms`: every id made earlier sorts before it and every id made
 * then or later sorts after, so `id < idFloor(t)` selects rows created before `t` by primary key.
 */
export function idFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const uuidRegExp = new RegExp(UUID_PATTERN);

export function isUuid(value: string): boolean {
  return uuidRegExp.test(value);
}
