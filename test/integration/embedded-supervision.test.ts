/**
 * Embedded PostgreSQL is supervised (issue 11, finding 10), on the real service (`src/main.ts`,
 * embedded default, its own DATA_DIR):
 * - the postmaster killed with SIGKILL: /readyz answers 503 while it is restarted, then 200, and
 *   the API works again on the same token;
 * - the service killed with SIGKILL leaves its cluster running: the next start stops that orphan
 *   and starts cleanly; with the postmaster killed too (a stale postmaster.pid), it starts cleanly;
 * - a cluster that cannot be restarted (its port taken meanwhile) is given up after the bounded
 *   attempts, with a clear error for the service to exit on, and readiness reads `failed`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import {
  embeddedState,
  isAlive,
  postmasterPid,
  startService,
  stopService,
  viewer,
  type ServiceProcess,
} from '../support/service-process.js';

let dataDir = '';
const running: ServiceProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(async () => {
  for (const s of running) await stopService(s).catch(() => undefined);
  const pid = dataDir ? await postmasterPid(dataDir).catch(() => null) : null;
  if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function readyz(url: string): Promise<number> {
  try {
    return (await fetch(new URL('/readyz', url), { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

async function until<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await sleep(25);
  }
}

async function killService(s: ServiceProcess): Promise<void> {
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGKILL');
  await exited;
  running.splice(running.indexOf(s), 1);
}

describe('the embedded PostgreSQL under supervision', () => {
  it(
    'should restart a killed cluster (readiness 503, then 200), and start cleanly after the service was killed',
    { timeout: 300_000 },
    async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'ct-supervise-'));
      const first = await startService(dataDir);
      running.push(first);
      const token = (await readFile(join(dataDir, 'admin-token'), 'utf8')).trim();
      const admin = { data: { viewer: { role: 'ADMIN', label: 'first admin' } } };
      expect(await readyz(first.url)).toBe(200);

      // The postmaster dies: readiness says so, the supervisor restarts it, the API works again.
      const pid = (await postmasterPid(dataDir))!;
      process.kill(pid, 'SIGKILL');
      await until(
        'readiness during the restart',
        () => readyz(first.url),
        (s) => s === 503,
        10_000,
      );
      await until(
        'readiness after the restart',
        () => readyz(first.url),
        (s) => s === 200,
        90_000,
      );
      expect(await viewer(first.url, token)).toEqual(admin);
      const restarted = (await postmasterPid(dataDir))!;
      expect(restarted).not.toBe(pid);
      expect(first.output()).toContain('embedded PostgreSQL stopped unexpectedly; restarting it');
      expect(first.output()).toContain('embedded PostgreSQL restarted');
      expect(first.child.exitCode).toBeNull();

      // The service dies without a word: its cluster is left running.
      await killService(first);
      expect(isAlive(restarted)).toBe(true);
      const second = await startService(dataDir);
      running.push(second);
      expect(second.output()).toContain('left running by a stopped service');
      expect(isAlive(restarted)).toBe(false);
      expect(await viewer(second.url, token)).toEqual(admin);
      expect(await readyz(second.url)).toBe(200);

      // Both die: a stale postmaster.pid of a dead process stays behind.
      const orphan = (await postmasterPid(dataDir))!;
      await killService(second);
      process.kill(orphan, 'SIGKILL');
      await until(
        'the old postmaster gone',
        async () => isAlive(orphan),
        (a) => !a,
        10_000,
      );
      const third = await startService(dataDir);
      running.push(third);
      expect(await viewer(third.url, token)).toEqual(admin);
      expect(await stopService(third)).toBe(0);
      running.splice(running.indexOf(third), 1);
      // A clean stop leaves no cluster behind.
      const last = await postmasterPid(dataDir);
      expect(last === null || !isAlive(last)).toBe(true);
    },
  );

  it(
    'should give up after its bounded attempts when the cluster cannot come back',
    { timeout: 120_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ct-supervise-fail-'));
      const warnings: string[] = [];
      let fatal: Error | null = null;
      const pg = await startEmbeddedPostgres(dir, () => undefined, {
        restartAttempts: 2,
        restartDelayMs: 300,
        logger: { warn: (_o, msg) => warnings.push(msg), error: (_o, msg) => warnings.push(msg) },
        onFatal: (err) => {
          fatal = err;
        },
      });
      try {
        const { port } = await embeddedState(dir);
        const pid = (await postmasterPid(dir))!;
        process.kill(pid, 'SIGKILL');
        await until(
          'the postmaster gone',
          async () => isAlive(pid),
          (a) => !a,
          10_000,
        );
        // Something else takes the port before the first attempt (300 ms later).
        const squatter = createServer();
        await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
        try {
          await until(
            'the supervisor to give up',
            async () => pg.state(),
            (s) => s === 'failed',
            60_000,
          );
        } finally {
          await new Promise<void>((resolve) => squatter.close(() => resolve()));
        }
        expect(fatal).not.toBeNull();
        expect(fatal!.message).toMatch(/stopped and could not be restarted after 2 attempts/);
        expect(fatal!.message).not.toContain((await embeddedState(dir)).password);
        expect(warnings.filter((w) => w === 'embedded PostgreSQL restart attempt failed')).toHaveLength(2);
      } finally {
        await pg.stop();
        const left = await postmasterPid(dir).catch(() => null);
        if (left !== null && isAlive(left)) process.kill(left, 'SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
