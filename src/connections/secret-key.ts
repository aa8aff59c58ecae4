import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The credential key: SECRET_KEY when configured, otherwise one generated once and kept in
 * DATA_DIR/secret.key (mode 600), so the embedded default needs no setup.
 */
export async function resolveSecretKey(configured: Buffer | null, dataDir: string): Promise<Buffer> {
  if (configured) return configured;
  const path = join(dataDir, 'secret.key');
  try {
    const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    if (key.length === 32) return key;
    throw new Error(`${path} does not hold a 32-byte base64 key`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // 'wx' fails if another process created it meanwhile; then read theirs.
  try {
    await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return resolveSecretKey(null, dataDir);
  }
}
