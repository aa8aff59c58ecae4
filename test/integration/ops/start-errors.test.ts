/**
 * `npm start` failures a newcomer meets end with one line naming the setting to change: a port in
 * use (not graphql-ws's stack), an unreachable database (not the driver's stack, never its password).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../../support/app.js';

const root = new URL('../../..', import.meta.url).pathname;
const STACK = /\n\s+at [^\n]+:\d+:\d+/;

async function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: await mkdtemp(join(tmpdir(), 'ct-start-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

describe('npm start', { timeout: 60_000 }, () => {
  it('should say in one line that the port is in use, naming PORT', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, stderr } = await start({ DATABASE_URL: await createEmptyDatabase(), PORT: String(port) });
      expect(code).toBe(1);
      expect(stderr).toBe(
        `could not start: port ${port} on 127.0.0.1 is already in use (another copy of this service?): stop that process or set PORT to a free port (PORT=0 picks any)\n`,
      );
      expect(stderr).not.toMatch(STACK);
    } finally {
      blocker.close();
    }
  });

  it('should say in one line that the database cannot be reached, naming DATABASE_URL without its password', async () => {
    const { code, stderr } = await start({
      DATABASE_URL: 'postgres://app:pw-0193-secret@127.0.0.1:1/tools',
      PORT: '0',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'could not start: cannot use the database at DATABASE_URL (127.0.0.1:1/tools): connection refused (is PostgreSQL running there?). Fix DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR.\n',
    );
    expect(stderr).not.toContain('pw-0193-secret');
  });
});
