import { hash, randomBytes } from 'node:crypto';

/** Opaque tokens: a recognisable prefix and 32 random bytes. Only the SHA-256 hash is stored. */
export const TOKEN_PREFIX = 'ctk_';

export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The shape generateToken makes: anything else is refused without a database lookup. */
export function isWellFormedToken(token: string): boolean {
  return /^ctk_[A-Za-z0-9_-]{43}$/.test(token);
}

/** SHA-256, hex. Once per request: the one-shot `hash` costs a quarter of a `createHash` object. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Reads `Authorization: Bearer <token>`; null when absent or malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9_\-.~+/]+=*)$/i.exec(header.trim());
  return match ? match[1]! : null;
}
