import { describe, expect, it } from 'vitest';
import { FRAGMENT, makeScrubber, NO_SECRETS, REDACTED, secretForms } from '../../../src/connections/scrub.js';

const KEY = 'sk_live_9fQ2xLmP4vRt7ZyA';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.access-token.Zm9vYmFy';

/** Every window of FRAGMENT characters of `secret`: none may appear in scrubbed text. */
function windows(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + FRAGMENT <= secret.length; i++) out.push(secret.slice(i, i + FRAGMENT));
  return out;
}

function leaks(text: string, secret: string): string[] {
  return windows(secret).filter((w) => text.includes(w));
}

describe('makeScrubber', () => {
  const scrub = makeScrubber([KEY, TOKEN]);

  it.each([
    ['the whole key', `key=${KEY};`, `key=${REDACTED};`],
    ['a prefix cut at a truncation point', `…${KEY.slice(0, 12)}`, `…${REDACTED}`],
    ['a suffix', `${KEY.slice(-9)} end`, `${REDACTED} end`],
    ['a middle fragment of exactly 8', `x${KEY.slice(5, 13)}x`, `x${REDACTED}x`],
    ['two echoes side by side', `${KEY}${KEY}`, REDACTED],
    ['the key then the token, touching', `${KEY}${TOKEN}`, REDACTED],
    ['the key JSON-escaped', JSON.stringify({ k: `${KEY}"` }), `{"k":"${REDACTED}\\""}`],
    ['the key in base64', `Basic ${Buffer.from(KEY).toString('base64')}`, `Basic ${REDACTED}`],
  ])('redacts %s', (_what, input, expected) => {
    expect(scrub.text(input)).toBe(expected);
  });

  it('leaves a fragment of 7 characters (below the rule) and unrelated text alone', () => {
    const text = `hello ${KEY.slice(0, 7)} world`;
    expect(scrub.text(text)).toBe(text);
    expect(scrub.hits(text)).toBe(false);
  });

  it.each([0, 1, 2, 5, 11, 15, 23])('leaves no 8-character fragment when the text is cut at %i', (cut) => {
    const text = `${'a'.repeat(30)}${KEY}${'b'.repeat(30)}`.slice(0, 30 + cut + FRAGMENT);
    const scrubbed = scrub.text(text);
    expect(leaks(scrubbed, KEY)).toEqual([]);
  });

  it('finds the key inside base64 of a longer text at every byte alignment', () => {
    for (const prefix of ['', 'u:', 'us:', 'use:']) {
      const encoded = Buffer.from(`${prefix}${KEY}`).toString('base64');
      const scrubbed = scrub.text(encoded);
      const forms = secretForms(KEY).filter((f) => f !== KEY);
      expect(scrubbed).toContain(REDACTED);
      for (const form of forms) expect(leaks(scrubbed, form)).toEqual([]);
    }
  });

  it('redacts a secret URL-encoded, with %20 or + for spaces', () => {
    const secret = 'k3y/with+special&chars and space';
    const s = makeScrubber([secret]);
    expect(s.text(`?k=${encodeURIComponent(secret)}&x=1`)).toBe(`?k=${REDACTED}&x=1`);
    expect(s.text(`?k=${encodeURIComponent(secret).replace(/%20/g, '+')}`)).toBe(`?k=${REDACTED}`);
  });

  it('redacts a secret with quotes and backslashes inside JSON text', () => {
    const secret = 'ab"cd\\ef"gh\\ij';
    const s = makeScrubber([secret]);
    expect(s.text(JSON.stringify({ k: secret }))).toBe(`{"k":"${REDACTED}"}`);
  });

  it('redacts overlapping secrets as one run', () => {
    const a = 'ABCDEFGHIJKLMNOP';
    const b = 'IJKLMNOPQRSTUVWX';
    const s = makeScrubber([a, b]);
    expect(s.text(`<${'ABCDEFGHIJKLMNOPQRSTUVWX'}>`)).toBe(`<${REDACTED}>`);
  });

  it('handles non-ASCII secrets and never splits a surrogate pair', () => {
    const secret = '🔑clé-très-secrète-🔒-42';
    const s = makeScrubber([secret]);
    const text = `x ${secret.slice(0, 12)} y`;
    const out = s.text(text);
    expect(out).toBe(`x ${REDACTED} y`);
    // A run that starts inside the pair takes the whole pair.
    const pairStart = makeScrubber(['\udd11clé-très-sec']);
    const res = pairStart.text('a🔑clé-très-sec b');
    expect(res).toBe(`a${REDACTED} b`);
    expect(() => encodeURIComponent(res)).not.toThrow();
  });

  it('redacts a short secret (4–7 characters) only where it occurs whole', () => {
    const s = makeScrubber(['pw42x']);
    expect(s.text('the pw42x and pw42')).toBe(`the ${REDACTED} and pw42`);
    expect(makeScrubber(['abc']).active).toBe(false);
  });

  it('scrubs JSON deeply, keys included, keeping unchanged values as they are', () => {
    const untouched = { type: 'object', properties: { a: { type: 'string' } } };
    const value = {
      untouched,
      list: ['ok', `echo ${KEY}`],
      [`prop_${KEY}`]: 1,
      [`prop_${TOKEN}`]: 2,
      n: 3,
      b: true,
      z: null,
    };
    const out = scrub.json(value);
    expect(out.untouched).toBe(untouched);
    expect(out.list).toEqual(['ok', `echo ${REDACTED}`]);
    expect(Object.keys(out)).toEqual([
      'untouched',
      'list',
      `prop_${REDACTED}`,
      `prop_${REDACTED}_2`,
      'n',
      'b',
      'z',
    ]);
    expect(JSON.stringify(out)).not.toContain(KEY.slice(0, 8));
    expect(scrub.json(untouched)).toBe(untouched);
  });

  it('returns the input unchanged when there are no secrets', () => {
    const text = `anything ${KEY}`;
    expect(NO_SECRETS.active).toBe(false);
    expect(NO_SECRETS.text(text)).toBe(text);
    const value = { a: [text] };
    expect(NO_SECRETS.json(value)).toBe(value);
    expect(makeScrubber([null, undefined, '']).active).toBe(false);
    expect(makeScrubber([])).toBe(NO_SECRETS);
    expect(makeScrubber(['abc'])).toBe(NO_SECRETS);
  });

  it('finds every one of many secrets (a prefilter at its largest) and leaves other text alone', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `secret-${i}-${'q'.repeat(i % 7)}-${i * 7919}`);
    const s = makeScrubber(many);
    for (const secret of [many[0]!, many[499]!, many[999]!]) {
      expect(s.text(`<${secret}>`)).toBe(`<${REDACTED}>`);
      expect(s.hits(`x${secret.slice(2, 10)}x`)).toBe(true);
    }
    const plain = 'nothing secret here, just words and 1234567890';
    expect(s.text(plain)).toBe(plain);
  });

  it('scans 2 MiB of text once, linearly', () => {
    const big = 'x'.repeat(2 * 1024 * 1024) + KEY.slice(3, 20);
    const out = scrub.text(big);
    expect(out.endsWith(REDACTED)).toBe(true);
    expect(out.length).toBe(2 * 1024 * 1024 + REDACTED.length);
  });

  it('leaves no fragment of random secrets in random text with random echoes', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=';
    const word = (n: number) => Array.from({ length: n }, () => alphabet[rnd(alphabet.length)]).join('');
    for (let round = 0; round < 200; round++) {
      const secrets = [word(8 + rnd(40)), word(8 + rnd(40))];
      const s = makeScrubber(secrets);
      let text = word(rnd(50));
      for (let k = 0; k < 4; k++) {
        const secret = secrets[rnd(2)]!;
        const from = rnd(secret.length - FRAGMENT + 1);
        text += secret.slice(from, from + FRAGMENT + rnd(secret.length - from - FRAGMENT + 1)) + word(rnd(5));
      }
      const out = s.text(text);
      for (const secret of secrets) expect(leaks(out, secret)).toEqual([]);
    }
  });
});
