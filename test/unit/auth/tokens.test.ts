import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateToken, hashToken, isWellFormedToken } from '../../../src/auth/tokens.js';

describe('hashToken', () => {
  it('should be the hex SHA-256 of the token', () => {
    // FIPS 180-2's test vector, then a real token against the streaming hash stored rows were made with.
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const token = generateToken();
    expect(isWellFormedToken(token)).toBe(true);
    expect(hashToken(token)).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
  });
});
