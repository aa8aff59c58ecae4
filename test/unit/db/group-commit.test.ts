import { describe, expect, it } from 'vitest';
import {
  GroupCommit,
  isPermanentServerError,
  isServerError,
  orderByLockKey,
  type GroupCommitIo,
  type Row,
} from '../../../src/db/group-commit.js';

interface Statement {
  sql: string;
  lockKey: string;
}

/** A fake database: records what was sent, answers when told to. */
function fakeIo() {
  const sent: { kind: 'one' | 'many'; sqls: string[]; settle: (err?: Error) => void }[] = [];
  const io: GroupCommitIo<Statement> = {
    one: (s) =>
      new Promise<Row[]>((resolve, reject) => {
        sent.push({
          kind: 'one',
          sqls: [s.sql],
          settle: (err) => (err ? reject(err) : resolve([{ sql: s.sql }])),
        });
      }),
    many: (list) =>
      new Promise<Row[][]>((resolve, reject) => {
        sent.push({
          kind: 'many',
          sqls: list.map((s) => s.sql),
          settle: (err) => (err ? reject(err) : resolve(list.map((s) => [{ sql: s.sql }]))),
        });
      }),
    rolledBack: isServerError,
  };
  return { io, sent };
}

const st = (sql: string, lockKey = 'k'): Statement => ({ sql, lockKey });
const tick = () => new Promise((r) => setImmediate(r));
const serverError = Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' });

describe('GroupCommit', () => {
  it('should send a lone statement at once, on its own', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 1 });
    const p = gc.run(st('a'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.kind).toBe('one');
    sent[0]!.settle();
    await expect(p).resolves.toEqual([{ sql: 'a' }]);
  });

  it('should batch what queues while the connections are busy, and answer only after the batch commits', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 1 });
    const first = gc.run(st('a'));
    const later = [gc.run(st('b', 't2')), gc.run(st('c', 't1')), gc.run(st('d', 't2'))];
    let answered = 0;
    for (const p of later) void p.then(() => answered++);
    expect(sent).toHaveLength(1);
    sent[0]!.settle();
    await first;
    await tick();
    expect(sent).toHaveLength(2);
    // Ordered by lock key, stable within a key.
    expect(sent[1]).toMatchObject({ kind: 'many', sqls: ['c', 'b', 'd'] });
    await tick();
    expect(answered).toBe(0); // not committed yet
    sent[1]!.settle();
    expect(await Promise.all(later)).toEqual([[{ sql: 'b' }], [{ sql: 'c' }], [{ sql: 'd' }]]);
    expect(gc.stats).toMatchObject({ batches: 1, batched: 3, fallbacks: 0 });
  });

  it('should cap a batch at maxBatch statements', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 1, maxBatch: 2 });
    const all = [gc.run(st('a')), gc.run(st('b')), gc.run(st('c')), gc.run(st('d'))];
    sent[0]!.settle();
    await tick();
    expect(sent[1]!.sqls).toEqual(['b', 'c']);
    sent[1]!.settle();
    await tick();
    await tick();
    expect(sent[2]!.sqls).toEqual(['d']);
    sent[2]!.settle();
    await Promise.all(all);
  });

  it('should run a refused batch again one statement at a time, so that each caller gets its own outcome', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 1 });
    const first = gc.run(st('a'));
    const good = gc.run(st('good', '1'));
    const bad = gc.run(st('bad', '2'));
    sent[0]!.settle();
    await first;
    await tick();
    sent[1]!.settle(serverError); // the whole batch rolled back
    await tick();
    expect(sent[2]).toMatchObject({ kind: 'one', sqls: ['good'] });
    sent[2]!.settle();
    await tick();
    expect(sent[3]).toMatchObject({ kind: 'one', sqls: ['bad'] });
    sent[3]!.settle(serverError);
    await expect(good).resolves.toEqual([{ sql: 'good' }]);
    await expect(bad).rejects.toBe(serverError);
    expect(gc.stats.fallbacks).toBe(1);
  });

  it('should not run a batch again when its fate is unknown (the connection broke): every caller gets the error', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 1 });
    const first = gc.run(st('a'));
    const b = gc.run(st('b'));
    const c = gc.run(st('c'));
    sent[0]!.settle();
    await first;
    await tick();
    const broken = new Error('Connection terminated unexpectedly');
    sent[1]!.settle(broken);
    await expect(b).rejects.toBe(broken);
    await expect(c).rejects.toBe(broken);
    expect(sent).toHaveLength(2);
  });

  it('should keep up to maxInFlight sends running at once', async () => {
    const { io, sent } = fakeIo();
    const gc = new GroupCommit(io, { inFlight: 2 });
    const all = [gc.run(st('a')), gc.run(st('b')), gc.run(st('c'))];
    expect(sent.map((s) => s.sqls)).toEqual([['a'], ['b']]);
    sent[1]!.settle();
    await tick();
    expect(sent[2]!.sqls).toEqual(['c']);
    sent[0]!.settle();
    sent[2]!.settle();
    await Promise.all(all);
  });
});

describe('orderByLockKey', () => {
  it('should sort by key and keep the order of equal keys', () => {
    const list = [
      { lockKey: 'b', n: 1 },
      { lockKey: 'a', n: 2 },
      { lockKey: 'b', n: 3 },
      { lockKey: 'a', n: 4 },
    ];
    expect(orderByLockKey(list).map((s) => s.n)).toEqual([2, 4, 1, 3]);
  });
});

describe('isServerError', () => {
  it('should tell a server-reported error (SQLSTATE and severity) from a broken connection', () => {
    expect(isServerError(serverError)).toBe(true);
    expect(isServerError(new Error('Connection terminated'))).toBe(false);
    expect(isServerError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isServerError(null)).toBe(false);
  });
});

describe('isPermanentServerError', () => {
  const pgError = (code: string) => Object.assign(new Error(code), { code, severity: 'ERROR' });
  it.each([
    ['22001', true], // value too long
    ['22P05', true], // untranslatable character
    ['23514', true], // check violation
    ['23502', true], // not null
    ['42703', true], // undefined column
    ['54001', true], // stack depth
    ['23505', false], // unique: the caller's to judge (an earlier try may have landed)
    ['40001', false], // serialization
    ['40P01', false], // deadlock
    ['57014', false], // statement cancelled
    ['08006', false], // connection failure
    ['53300', false], // too many connections
  ])('should judge SQLSTATE %s permanent: %s', (code, permanent) => {
    expect(isPermanentServerError(pgError(code))).toBe(permanent);
  });

  it('should never judge an error without a SQLSTATE permanent', () => {
    expect(isPermanentServerError(new Error('socket hang up'))).toBe(false);
    expect(isPermanentServerError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
  });
});
