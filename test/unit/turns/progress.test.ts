import { describe, expect, it } from 'vitest';
import { eventArguments } from '../../../src/turns/event-payload.js';
import { ProgressGate, toProgressLine, type ProgressLine } from '../../../src/turns/progress.js';

const TOKEN = 'ct-1';
const same = (text: string) => text;

function line(n: number): ProgressLine {
  return { kind: 'PROGRESS', atMs: n, progress: n, total: null, level: null, message: null };
}

describe('server notifications as progress lines', () => {
  it('should read progress for our token, with total and message', () => {
    expect(
      toProgressLine(
        {
          method: 'notifications/progress',
          params: { progressToken: TOKEN, progress: 2, total: 5, message: 'step  2\nof 5' },
          progressToken: TOKEN,
        },
        120,
        same,
      ),
    ).toEqual({ kind: 'PROGRESS', atMs: 120, progress: 2, total: 5, level: null, message: 'step 2 of 5' });
  });

  it.each([
    ['another token', { method: 'notifications/progress', params: { progressToken: 'x', progress: 1 } }],
    [
      'no progress number',
      { method: 'notifications/progress', params: { progressToken: TOKEN, progress: '1' } },
    ],
    ['a log without data', { method: 'notifications/message', params: { level: 'info' } }],
    ['an unknown level', { method: 'notifications/message', params: { level: 'loud', data: 'x' } }],
    ['another method', { method: 'notifications/resources/updated', params: { uri: 'x' } }],
    ['params that are not an object', { method: 'notifications/message', params: 'hello' }],
  ])('should ignore %s', (_name, n) => {
    expect(toProgressLine({ ...n, progressToken: TOKEN }, 0, same)).toBeNull();
  });

  it('should read a log line with its logger, scrub it before cutting, and make it storable', () => {
    const got = toProgressLine(
      {
        method: 'notifications/message',
        params: {
          level: 'warning',
          logger: 'db',
          data: { key: 'SECRET-KEY-123', pad: 'x'.repeat(400), nul: 'a\u0000b' },
        },
        progressToken: TOKEN,
      },
      7,
      (text) => text.split('SECRET-KEY-123').join('[redacted]'),
      60,
    )!;
    expect(got.kind).toBe('LOG');
    expect(got.level).toBe('warning');
    const prefix = 'db: {"key":"[redacted]","pad":"';
    expect(got.message).toBe(`${prefix}${'x'.repeat(60 - prefix.length)}…`);
    const withNul = toProgressLine(
      { method: 'notifications/message', params: { level: 'info', data: 'a\u0000b' }, progressToken: TOKEN },
      0,
      same,
    )!;
    expect(withNul.message).toBe('a\ufffdb');
  });
});

describe('the per-call progress gate', () => {
  it('should send live at most maxEvents lines, at least minIntervalMs apart, and keep the last maxLines', () => {
    const gate = new ProgressGate({ maxEvents: 3, minIntervalMs: 100, maxLines: 4 });
    const live: number[] = [];
    for (let i = 0; i < 1000; i++) if (gate.offer(line(i), i * 10)) live.push(i);
    // Every 100 ms (each 10th notification) until the cap of 3.
    expect(live).toEqual([0, 10, 20]);
    expect(gate.emitted).toBe(3);
    const record = gate.record();
    expect(record.lines.map((l) => l.progress)).toEqual([996, 997, 998, 999]);
    expect(record.dropped).toBe(996);
  });

  it('should hold back the newest line the interval refused, and give it once when the call ends', () => {
    const gate = new ProgressGate({ maxEvents: 30, minIntervalMs: 200, maxLines: 50 });
    const live = [0, 1, 2].filter((i) => gate.offer(line(i), i * 50));
    expect(live).toEqual([0]);
    expect(gate.takeHeld()).toEqual(line(2));
    expect(gate.takeHeld()).toBeNull();
    expect(gate.emitted).toBe(2);
    // A line that went out live leaves nothing held.
    const calm = new ProgressGate({ maxEvents: 30, minIntervalMs: 200, maxLines: 50 });
    expect(calm.offer(line(0), 0)).toBe(true);
    expect(calm.takeHeld()).toBeNull();
    // Past the cap of live events, nothing more goes out, the last line included.
    const capped = new ProgressGate({ maxEvents: 1, minIntervalMs: 200, maxLines: 50 });
    expect([0, 1].filter((i) => capped.offer(line(i), i))).toEqual([0]);
    expect(capped.takeHeld()).toBeNull();
  });

  it('should send a slow stream of lines live, every one', () => {
    const gate = new ProgressGate({ maxEvents: 30, minIntervalMs: 200, maxLines: 50 });
    const live = [0, 1, 2, 3, 4].filter((i) => gate.offer(line(i), i * 1_000));
    expect(live).toEqual([0, 1, 2, 3, 4]);
    expect(gate.record()).toEqual({ lines: [0, 1, 2, 3, 4].map(line), dropped: 0 });
  });
});

describe('arguments on the CALL_STARTED event', () => {
  it('should carry them when small and leave them to the TurnCall when large', () => {
    expect(eventArguments('{"email":"a@b.c"}')).toEqual({
      argumentsJson: '{"email":"a@b.c"}',
      argumentsCut: false,
    });
    expect(eventArguments(JSON.stringify({ blob: 'x'.repeat(100) }), 50)).toEqual({
      argumentsJson: 'null',
      argumentsCut: true,
    });
  });
});
