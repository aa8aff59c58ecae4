import { createHash, randomBytes } from 'node:crypto';

/** Opaque tokens: a recognisable prefix and 32 random bytes. Only the SHA-256 hash is stored. */
export const TOKEN_PREFIX = 'ctk_';

export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads `Authorization: Bearer <token>`; null when absent or malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9_\-.~+/]+=*)$/i.exec(header.trim());
  return match ? match[1]! : null;
}
