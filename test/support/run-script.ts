/**
 * Runs one of the repo's TypeScript entry points (`src/main.ts`, `scripts/token.ts`,
 * `scripts/demo.ts`) as a child process through tsx, and collects what it printed and its exit code.
 */
import { spawn } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `env` is laid over this process's environment. */
export async function runScript(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ScriptRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}
