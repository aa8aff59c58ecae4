/**
 * `npm test` leaves the temp directory as it found it (issue 25, item 8): the whole run (test
 * workers, the services and scripts they start, the embedded cluster) gets a temp directory of
 * its own, through TMPDIR; at the end it must be empty but for tool caches, or the run fails
 * naming what was left. Then it is removed. Artifacts the run keeps (ARTIFACTS_DIR) default to a
 * folder in the outer temp directory, so they outlive it.
 */
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Caches that tools keep in the temp directory by design (tsx's compiled sources). */
const TOOL_CACHES = /^tsx-\d+$/;

export default async function setup(): Promise<() => Promise<void>> {
  const outer = process.env.TMPDIR;
  // Artifacts a run keeps on purpose (the console page's screenshots) go beside it, not in it.
  process.env.ARTIFACTS_DIR ??= join(tmpdir(), 'connected-tools-artifacts');
  const dir = await mkdtemp(join(tmpdir(), 'ct-test-run-'));
  // As root the embedded cluster runs as `postgres`, which must pass through to its data folder.
  await chmod(dir, 0o711);
  process.env.TMPDIR = dir;
  return async () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const left = (await readdir(dir)).filter((name) => !TOOL_CACHES.test(name));
    await rm(dir, { recursive: true, force: true });
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: fail the run by its exit code.
      process.exitCode = 1;
      throw new Error(`the tests left ${left.length} entries in the temp directory: ${left.sort().join(', ')}`);
    }
  };
}
