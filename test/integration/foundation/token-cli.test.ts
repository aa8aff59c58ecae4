/**
 * `npm run token`: --help and bad arguments answer with usage and no stack trace, and a token
 * minted with --expires carries its expiry.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../../support/app.js';
import { runScript } from '../../support/run-script.js';

function run(args: string[], env: Record<string, string> = {}) {
  return runScript('scripts/token.ts', args, env);
}

const STACK = /\n\s+at [^\n]+:\d+:\d+/;

// Each case starts a process (tsx): seconds on a busy machine.
describe('npm run token', { timeout: 60_000 }, () => {
  it('should print its usage for --help, documenting --workspace and --expires, without touching a database', async () => {
    const { code, stdout, stderr } = await run(['--help'], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('--workspace');
    expect(stdout).toContain('--expires');
    expect(stdout).toMatch(/customer .*needs --workspace/);
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--role', 'runtime', '--expires', 'soon'], /--expires "soon" is neither/],
  ])('should refuse %j with exit code 2, a message and no stack trace', async (args, message) => {
    const { code, stderr } = await run(args, { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(STACK);
  });

  it('should say which database it could not open, without a stack trace', async () => {
    const { code, stderr } = await run(['--role', 'runtime'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/could not open the database at DATABASE_URL/);
    expect(stderr).not.toMatch(STACK);
  });

  it(
    'should mint a token with an expiry, and refuse a CUSTOMER token without a workspace',
    { timeout: 60_000 },
    async () => {
      const url = await createEmptyDatabase();
      const customer = await run(['--role', 'customer'], { DATABASE_URL: url });
      expect(customer.code).toBe(2);
      expect(customer.stderr).toBe('a CUSTOMER token needs a workspace (--workspace)\n');
      const before = Date.now();
      const minted = await run(['--role', 'runtime', '--label', 'cli runtime', '--expires', '2d'], {
        DATABASE_URL: url,
      });
      expect(minted.code).toBe(0);
      expect(minted.stdout.trim()).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ label: string; role: string; expires_at: Date }>(
          'select label, role, expires_at from api_token',
        );
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ label: 'cli runtime', role: 'RUNTIME' });
        const ms = rows[0]!.expires_at.getTime() - before;
        expect(ms).toBeGreaterThan(2 * 86_400_000 - 60_000);
        expect(ms).toBeLessThan(2 * 86_400_000 + 60_000);
      } finally {
        await client.end();
      }
    },
  );
});
