import { describe, expect, it } from 'vitest';
import { KeyedSerial } from '../../../src/discovery/serial.js';

/** A task that runs until released, recording when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    task: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
    release: () => release(),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedSerial', () => {
  it('should run the tasks of one key one at a time, in arrival order', async () => {
    const serial = new KeyedSerial(4);
    const log: string[] = [];
    const a = gate(log, 'a1');
    const b = gate(log, 'a2');
    const p1 = serial.run('a', a.task);
    const p2 = serial.run('a', b.task);
    await tick();
    expect(log).toEqual(['start a1']);
    expect(serial.waiting).toBe(1);
    a.release();
    expect(await p1).toBe('a1');
    await tick();
    expect(log).toEqual(['start a1', 'end a1', 'start a2']);
    b.release();
    expect(await p2).toBe('a2');
  });

  it('should never run more than the limit at once across keys', async () => {
    const serial = new KeyedSerial(2);
    const log: string[] = [];
    const gates = ['x', 'y', 'z'].map((k) => gate(log, k));
    const runs = gates.map((g, i) => serial.run(['x', 'y', 'z'][i]!, g.task));
    await tick();
    expect(serial.running).toBe(2);
    expect(log).toEqual(['start x', 'start y']);
    gates[1]!.release();
    await runs[1];
    await tick();
    expect(log).toContain('start z');
    gates[0]!.release();
    gates[2]!.release();
    expect(await Promise.all(runs)).toEqual(['x', 'y', 'z']);
    expect(serial.running).toBe(0);
  });

  it('should free the key and the slot when a task throws', async () => {
    const serial = new KeyedSerial(1);
    await expect(serial.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      serial.run('k', () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(await serial.run('k', async () => 'next')).toBe('next');
  });

  it('should drop a waiter whose signal fires before its turn, with the signal reason', async () => {
    const serial = new KeyedSerial(1);
    const log: string[] = [];
    const first = gate(log, 'first');
    const p1 = serial.run('k', first.task);
    const controller = new AbortController();
    let ran = false;
    const p2 = serial.run(
      'k',
      async () => {
        ran = true;
      },
      controller.signal,
    );
    const reason = new Error('deadline');
    controller.abort(reason);
    await expect(p2).rejects.toBe(reason);
    expect(serial.waiting).toBe(0);
    first.release();
    await p1;
    await tick();
    expect(ran).toBe(false);
    const aborted = new AbortController();
    aborted.abort();
    await expect(serial.run('k', async () => 1, aborted.signal)).rejects.toBeDefined();
  });

  it('should refuse a limit below one', () => {
    expect(() => new KeyedSerial(0)).toThrow(RangeError);
  });
});
