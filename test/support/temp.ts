/** Folders a test makes under the temp directory, removed when that test finishes. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh folder `<tmp>/<prefix>XXXXXX`, removed (with what is in it) once the current test ends. */
export async function tempDirForTest(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
