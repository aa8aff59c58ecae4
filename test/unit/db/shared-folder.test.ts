/**
 * The embedded cluster's shared folder (issue 25, item 8): as root the binaries are copied to, and
 * run as postgres from, a folder under /var/tmp, where anyone may create folders first. Only a
 * folder of ours that nobody else may write to is used; any other is refused before anything in
 * it runs.
 */
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedPostgresError, sharedFolder } from '../../../src/db/embedded.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ct-shared-folder-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('sharedFolder', () => {
  it('should make a missing folder ours, mode 755 whatever the umask', async () => {
    const path = join(root, 'connected-tools-pg');
    const umask = process.umask(0o077);
    try {
      expect(await sharedFolder(path)).toBe(path);
    } finally {
      process.umask(umask);
    }
    const stat = await lstat(path);
    expect(stat.uid).toBe(userInfo().uid);
    expect(stat.mode & 0o777).toBe(0o755);
    // Once made, it is taken as it is.
    expect(await sharedFolder(path)).toBe(path);
  });

  it('should refuse a folder others may write to', async () => {
    const path = join(root, 'open');
    await mkdir(path);
    await chmod(path, 0o777);
    await expect(sharedFolder(path)).rejects.toThrow(EmbeddedPostgresError);
    await expect(sharedFolder(path)).rejects.toThrow(/may be written by others \(mode 777\)/);
    await chmod(path, 0o775);
    await expect(sharedFolder(path)).rejects.toThrow(/mode 775/);
  });

  it('should refuse a symbolic link and a file in its place', async () => {
    const real = join(root, 'real');
    await mkdir(real, { mode: 0o755 });
    await symlink(real, join(root, 'link'));
    await expect(sharedFolder(join(root, 'link'))).rejects.toThrow(/is a symbolic link/);
    await writeFile(join(root, 'file'), '');
    await expect(sharedFolder(join(root, 'file'))).rejects.toThrow(/is not a folder/);
  });

  it.runIf(userInfo().uid === 0)(
    'should refuse a folder another user made first, naming it and what to do',
    async () => {
      const path = join(root, 'squatted');
      await mkdir(path, { mode: 0o755 });
      await chown(path, 65_534, 65_534);
      await expect(sharedFolder(path)).rejects.toThrow(
        `${path} is owned by uid 65534, not this service's (0), so what it holds cannot be trusted to run as postgres; remove it, or set DATA_DIR to a folder the postgres user can reach`,
      );
    },
  );
});
