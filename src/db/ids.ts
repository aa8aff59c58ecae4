import { randomBytes } from 'node:crypto';

/** Random bytes drawn at once and handed out ten at a time: one `randomBytes` per 409 ids. */
const POOL_BYTES = 4096;
const RANDOM_BYTES = 10;
let pool = Buffer.alloc(0);
let offset = 0;
const scratch = Buffer.alloc(16);

/**
 * UUID version 7: time-ordered, so primary keys double as a stable creation order for keyset
 * pagination ("newest first" is `ORDER BY id DESC`). 48 bits of milliseconds, then 74 random bits
 * (from a pool refilled by `randomBytes`, as `crypto.randomUUID` does; ids are not secrets).
 */
export function uuidv7(now: number = Date.now()): string {
  if (offset + RANDOM_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  scratch.writeUIntBE(now, 0, 6);
  pool.copy(scratch, 6, offset, offset + RANDOM_BYTES);
  offset += RANDOM_BYTES;
  scratch[6] = (scratch[6]! & 0x0f) | 0x70;
  scratch[8] = (scratch[8]! & 0x3f) | 0x80;
  const hex = scratch.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The creation time (ms) of a UUIDv7, or null for an id of another version. */
export function uuidv7Time(id: string): number | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** The lowest UUIDv7 of an instant: what every id made at or after it is at least. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
