import { describe, expect, it } from 'vitest';
import { uuidv7, uuidv7Floor } from '../../../src/db/ids.js';
import {
  DAY_MS,
  createDayStatements,
  dayBounds,
  dayOf,
  partitionDay,
  partitionName,
  planPartitions,
} from '../../../src/db/partitions.js';

const DEC_1 = Date.UTC(2026, 11, 1);

describe('partition days and names', () => {
  it('should name a day by its UTC date and read the day back', () => {
    expect(partitionName('turn_call', DEC_1)).toBe('turn_call_p20261201');
    expect(partitionDay('turn_call', 'turn_call_p20261201')).toBe(DEC_1);
    expect(partitionDay('turn_event', 'turn_event_p20261231')).toBe(Date.UTC(2026, 11, 31));
    expect(partitionDay('turn_call', 'turn_call_default')).toBeNull();
    expect(partitionDay('turn_call', 'turn_event_p20261201')).toBeNull();
  });

  it('should put the last millisecond of a day in that day, and midnight in the next', () => {
    expect(dayOf(DEC_1 + DAY_MS - 1)).toBe(DEC_1);
    expect(dayOf(DEC_1 + DAY_MS)).toBe(DEC_1 + DAY_MS);
  });

  it("should bound a day's call ids so that every UUIDv7 made in the day is inside, and none made outside", () => {
    const { from, to } = dayBounds('turn_call', DEC_1);
    const lo = from.slice(1, -1);
    const hi = to.slice(1, -1);
    // UUIDs compare as their bytes; lowercase hex strings of equal form compare the same way.
    for (const ms of [DEC_1, DEC_1 + 1, DEC_1 + DAY_MS - 1]) {
      const id = uuidv7(ms);
      expect(id >= lo && id < hi).toBe(true);
    }
    expect(uuidv7(DEC_1 - 1) < lo).toBe(true);
    expect(uuidv7(DEC_1 + DAY_MS) >= hi).toBe(true);
    expect(uuidv7Floor(DEC_1)).toBe(
      `${DEC_1.toString(16).padStart(12, '0').slice(0, 8)}-${DEC_1.toString(16).padStart(12, '0').slice(8)}-0000-0000-000000000000`,
    );
  });

  it("should bound a day's events by created_at at UTC midnights", () => {
    expect(dayBounds('turn_event', DEC_1)).toEqual({
      from: `'2026-12-01T00:00:00.000Z'`,
      to: `'2026-12-02T00:00:00.000Z'`,
    });
  });

  it('should make a partition as a table, move its rows out of the default partition, then attach it', () => {
    const sql = createDayStatements('turn_event', DEC_1);
    expect(sql[0]).toMatch(/^create table "turn_event_p20261201" \(like "turn_event"/);
    expect(sql[1]).toMatch(/delete from "turn_event_default" where .* = 1796083200000 returning \*/);
    expect(sql[1]).toMatch(/insert into "turn_event_p20261201" select \* from moved$/);
    expect(sql[2]).toBe(
      `alter table "turn_event" attach partition "turn_event_p20261201" for values from ('2026-12-01T00:00:00.000Z') to ('2026-12-02T00:00:00.000Z')`,
    );
  });
});

describe('planPartitions', () => {
  const base = {
    table: 'turn_event' as const,
    existing: [] as number[],
    waiting: [] as number[],
    aheadDays: 2,
    retentionDays: 0,
    summedUntil: null,
  };

  it('should create today and the days ahead that are missing, at the last millisecond of a day too', () => {
    const now = DEC_1 + DAY_MS - 1;
    expect(planPartitions({ ...base, now, existing: [DEC_1, DEC_1 + DAY_MS] })).toEqual({
      create: [DEC_1 + 2 * DAY_MS],
      drop: [],
    });
    // One millisecond later it is the next day: one more ahead.
    expect(planPartitions({ ...base, now: now + 1, existing: [DEC_1, DEC_1 + DAY_MS] }).create).toEqual([
      DEC_1 + 2 * DAY_MS,
      DEC_1 + 3 * DAY_MS,
    ]);
  });

  it('should create the days of rows waiting in the default partition, unless they are past retention', () => {
    const plan = planPartitions({
      ...base,
      now: DEC_1,
      existing: [DEC_1, DEC_1 + DAY_MS, DEC_1 + 2 * DAY_MS],
      waiting: [DEC_1 - 2 * DAY_MS, DEC_1 - 20 * DAY_MS, DEC_1 + 9 * DAY_MS],
      retentionDays: 10,
    });
    expect(plan.create).toEqual([DEC_1 - 2 * DAY_MS, DEC_1 + 9 * DAY_MS]);
  });

  it('should keep every day when retention is 0', () => {
    const plan = planPartitions({ ...base, now: DEC_1, existing: [DEC_1 - 900 * DAY_MS, DEC_1] });
    expect(plan.drop).toEqual([]);
  });

  it('should drop only days that ended retentionDays before today', () => {
    const existing = [DEC_1 - 4 * DAY_MS, DEC_1 - 3 * DAY_MS, DEC_1 - 2 * DAY_MS, DEC_1];
    const plan = planPartitions({ ...base, now: DEC_1 + 5, existing, retentionDays: 3 });
    // The day 3 days ago ends 2 days ago: it still holds rows younger than 3 days.
    expect(plan.drop).toEqual([DEC_1 - 4 * DAY_MS]);
  });

  it('should not drop calls the usage roll-up has not summed yet', () => {
    const existing = [DEC_1 - 5 * DAY_MS, DEC_1 - 4 * DAY_MS, DEC_1];
    const input = { ...base, table: 'turn_call' as const, now: DEC_1, existing, retentionDays: 2 };
    expect(planPartitions({ ...input, summedUntil: null }).drop).toEqual([]);
    expect(planPartitions({ ...input, summedUntil: DEC_1 - 4 * DAY_MS }).drop).toEqual([DEC_1 - 5 * DAY_MS]);
    expect(planPartitions({ ...input, summedUntil: DEC_1 }).drop).toEqual([
      DEC_1 - 5 * DAY_MS,
      DEC_1 - 4 * DAY_MS,
    ]);
  });
});
