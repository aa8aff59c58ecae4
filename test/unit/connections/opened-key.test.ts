import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CredentialKind } from '../../../src/connections/connection.entity.js';
import {
  credentialAad,
  OPENED_KEYS_KEPT,
  openedKey,
  type ConnectionTarget,
  type EndpointDeps,
} from '../../../src/connections/endpoint.js';
import { REDACTED } from '../../../src/connections/scrub.js';
import { SecretBox } from '../../../src/connections/secrets.js';

/** A real SecretBox that counts how often it opens a sealed value. */
class CountingBox extends SecretBox {
  opens = 0;
  override open(sealed: string, associatedData = ''): string {
    this.opens++;
    return super.open(sealed, associatedData);
  }
}

function world(): { box: CountingBox; services: EndpointDeps } {
  const box = new CountingBox(randomBytes(32));
  // No OAuth connection is opened here: a key connection never asks it.
  return { box, services: { secrets: box, oauth: null as never } };
}

function keyConnection(box: SecretBox, id: string, key: string): ConnectionTarget {
  return {
    id,
    endpointUrl: 'https://tools.example.com/mcp',
    timeoutMs: null,
    credentialKind: CredentialKind.BEARER,
    credentialHeaderName: null,
    credentialSecret: box.seal(key, credentialAad(id)),
    credentialOrigins: ['https://tools.example.com'],
  };
}

describe('openedKey', () => {
  it('should open a key once for its sealed value and scrub every form of it', () => {
    const { box, services } = world();
    const key = 'sk_live_9fQ2xLmP4vRt7ZyA';
    const target = keyConnection(box, 'c1', key);
    const first = openedKey(services, target);
    const again = openedKey(services, { ...target });
    expect(first.key).toBe(key);
    expect(again).toBe(first);
    expect(box.opens).toBe(1);
    expect(first.scrubber.text(`echo ${Buffer.from(key).toString('base64')}`)).toBe(`echo ${REDACTED}`);
  });

  it('should open a changed credential afresh: the new key, and the new key scrubbed', () => {
    const { box, services } = world();
    const before = openedKey(services, keyConnection(box, 'c1', 'old-key-0123456789'));
    const after = openedKey(services, keyConnection(box, 'c1', 'new-key-9876543210'));
    expect(after.key).toBe('new-key-9876543210');
    expect(after.scrubber.text('new-key-9876543210')).toBe(REDACTED);
    expect(before.scrubber.text('new-key-9876543210')).toBe('new-key-9876543210');
    expect(box.opens).toBe(2);
  });

  it('should still refuse a sealed value copied to another connection after its own was opened', () => {
    const { box, services } = world();
    const own = keyConnection(box, 'c1', 'sk_live_copied_value_1');
    expect(openedKey(services, own).key).toBe('sk_live_copied_value_1');
    const copy = { ...own, id: 'c2' };
    expect(() => openedKey(services, copy)).toThrow(expect.objectContaining({ code: 'SECRET_UNREADABLE' }));
  });

  it('should give no key and an inactive scrubber to a connection without one, opening nothing', () => {
    const { box, services } = world();
    for (const kind of [CredentialKind.NONE, CredentialKind.OAUTH]) {
      const opened = openedKey(services, {
        ...keyConnection(box, 'c1', 'x'.repeat(20)),
        credentialKind: kind,
      });
      expect(opened.key).toBeNull();
      expect(opened.scrubber.active).toBe(false);
    }
    expect(box.opens).toBe(0);
  });

  it(`should keep at most ${OPENED_KEYS_KEPT} keys, dropping the oldest first`, () => {
    const { box, services } = world();
    const targets = Array.from({ length: OPENED_KEYS_KEPT + 1 }, (_, i) =>
      keyConnection(box, `c${i}`, `key-number-${i}-of-many`),
    );
    for (const target of targets) openedKey(services, target);
    expect(box.opens).toBe(OPENED_KEYS_KEPT + 1);
    openedKey(services, targets[OPENED_KEYS_KEPT]!);
    expect(box.opens).toBe(OPENED_KEYS_KEPT + 1);
    expect(openedKey(services, targets[0]!).key).toBe('key-number-0-of-many');
    expect(box.opens).toBe(OPENED_KEYS_KEPT + 2);
  });
});
