/**
 * The parsers of one environment variable each (a whole number in bounds, a boolean, a list of
 * origins, a key, a database URL) and the error they throw, which names the variable and never
 * echoes a value that may hold a secret. `config.ts` composes them into the service's settings.
 * Pure.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * A comma-separated list of web origins (`https://app.example.com`, `http://localhost:5173`):
 * scheme, host and port only, no path, as a browser sends them in `Origin`.
 */
export function origins(env: Env, name: string): string[] {
  const out: string[] = [];
  for (const item of (env[name] ?? '').split(',')) {
    const raw = item.trim();
    if (raw === '') continue;
    let origin: string | null = null;
    try {
      const u = new URL(raw);
      if (u.protocol === 'http:' || u.protocol === 'https:') origin = u.origin;
    } catch {
      origin = null;
    }
    if (origin === null || origin !== raw.replace(/\/$/, '').toLowerCase())
      throw new ConfigError(
        `${name} must list origins such as https://app.example.com (scheme, host, port; no path), got "${raw}"`,
      );
    out.push(origin);
  }
  return out;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function parseSecretKey(raw: string | undefined): Buffer | null {
  if (raw === undefined || raw === '') return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  return key;
}

export function parseDatabaseUrl(raw: string | undefined, name = 'DATABASE_URL'): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The value may hold a password: never echo it.
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must start with postgres:// or postgresql://, got "${url.protocol}//"`);
  }
  return raw;
}
