/**
 * Credentials at rest: AES-256-GCM under the configured key. A sealed value is
 * `v1.<iv>.<tag>.<ciphertext>` (base64url parts); the version prefix leaves room for rotation.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

const VERSION = 'v1';

export class SecretBox {
  readonly #key: Buffer;
  /** A key of its own for {@link fingerprint}, derived so that no MAC is ever made with the sealing key. */
  readonly #macKey: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
    this.#macKey = createHmac('sha256', key).update('connected-tools fingerprint v1').digest();
  }

  /**
   * A keyed digest (HMAC-SHA256, hex) of the parts, each length-prefixed so that no two lists of
   * parts collide. Safe to store even when a part is a secret: without the key, a stored
   * fingerprint cannot be checked against guesses.
   */
  fingerprint(parts: readonly string[]): string {
    const mac = createHmac('sha256', this.#macKey);
    // The prefix counts UTF-16 code units: reading them back off the UTF-8 stream is unambiguous.
    for (const part of parts) mac.update(`${part.length}:`).update(part, 'utf8');
    return mac.digest('hex');
  }

  seal(plaintext: string, associatedData = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [
      VERSION,
      iv.toString('base64url'),
      tag.toString('base64url'),
      ciphertext.toString('base64url'),
    ].join('.');
  }

  open(sealed: string, associatedData = ''): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new AppError('SECRET_UNREADABLE', 'a stored secret has an unknown format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(parts[1]!, 'base64url'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(parts[2]!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch (cause) {
      // Wrong key or tampered data; the message must not include any of the data.
      throw new AppError('SECRET_UNREADABLE', 'a stored secret could not be decrypted (wrong SECRET_KEY?)', {
        cause,
      });
    }
  }
}
