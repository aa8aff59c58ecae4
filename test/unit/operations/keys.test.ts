import { describe, expect, it } from 'vitest';
import {
  assignKey,
  FALLBACK_CONNECTION_SLUG,
  FALLBACK_OPERATION_PART,
  MAX_OPERATION_PART_LENGTH,
  MAX_SLUG_LENGTH,
  operationKey,
  slugify,
  snakePart,
} from '../../../src/operations/keys.js';

describe('snakePart', () => {
  it.each([
    ['listPets', 'list_pets'],
    ['getHTTPResponse', 'get_http_response'],
    ['XMLHttpRequest', 'xml_http_request'],
    ['HTTP2Server', 'http2_server'],
    ['getV2Users', 'get_v2_users'],
    ['IPv4Address', 'i_pv4_address'],
    ['ABC', 'abc'],
    ['already_snake', 'already_snake'],
    ['kebab-case-name', 'kebab_case_name'],
    ['dotted.name.v1', 'dotted_name_v1'],
    ['  Hello,   World!! ', 'hello_world'],
    ['__private__', 'private'],
    ['a__b', 'a_b'],
    ['GET /pets/{petId}', 'get_pets_pet_id'],
    ['Café Crème', 'cafe_creme'],
    ['ﬁle', 'file'],
    ['ＡＢＣ', 'abc'],
    ['emoji🎉party', 'emoji_party'],
    ['Straße', 'stra_e'],
    ['数据', ''],
    ['', ''],
    ['---', ''],
    ['123', '123'],
  ])('should turn %j into %j', (raw, expected) => {
    expect(snakePart(raw)).toBe(expected);
  });

  it.each(['listPets', 'getHTTPResponse', ' A--b__C ', 'Café', 'x.Y.z'])(
    'should give the same result when applied twice to %j',
    (raw) => {
      const once = snakePart(raw);
      expect(snakePart(once)).toBe(once);
      expect(once).toMatch(/^(?:[a-z0-9]+(?:_[a-z0-9]+)*)?$/);
    },
  );
});

describe('slugify', () => {
  it.each([
    ['Acme CRM', 'acme_crm'],
    ['PetStore', 'pet_store'],
    ['GitHub', 'git_hub'],
    ['my-server.example.com', 'my_server_example_com'],
    ['Zürich Transit', 'zurich_transit'],
    ['!!!', FALLBACK_CONNECTION_SLUG],
    ['', FALLBACK_CONNECTION_SLUG],
    ['東京', FALLBACK_CONNECTION_SLUG],
  ])('should slugify %j as %j', (name, expected) => {
    expect(slugify(name)).toBe(expected);
  });
});

describe('operationKey', () => {
  it.each([
    ['petstore', 'listPets', 'connector.petstore.list_pets'],
    ['acme_crm', 'getHTTPResponse', 'connector.acme_crm.get_http_response'],
    ['acme_crm', 'contacts.search', 'connector.acme_crm.contacts_search'],
    ['Acme CRM', 'search', 'connector.acme_crm.search'],
    ['a.b', 'c', 'connector.a_b.c'],
    ['petstore', '🎉', `connector.petstore.${FALLBACK_OPERATION_PART}`],
    ['petstore', '', `connector.petstore.${FALLBACK_OPERATION_PART}`],
    ['', 'listPets', `connector.${FALLBACK_CONNECTION_SLUG}.list_pets`],
  ])('should key (%j, %j) as %j', (slug, name, expected) => {
    expect(operationKey(slug, name)).toBe(expected);
  });

  it('should give two names that differ only in case and punctuation the same base key', () => {
    expect(operationKey('s', 'listPets')).toBe(operationKey('s', 'list-pets'));
  });
});

describe('assignKey', () => {
  it.each([
    ['free base', 'k', [], 'k'],
    ['base taken', 'k', ['k'], 'k_2'],
    ['base and _2 taken', 'k', ['k', 'k_2'], 'k_3'],
    ['gap in suffixes', 'k', ['k', 'k_3'], 'k_2'],
    ['only a suffixed key taken', 'k', ['k_2'], 'k'],
    ['longer run', 'k', ['k', 'k_2', 'k_3', 'k_4', 'k_5'], 'k_6'],
    ['other keys do not matter', 'connector.a.b', ['connector.a.c', 'connector.b.b'], 'connector.a.b'],
  ])('should handle %s', (_label, base, taken, expected) => {
    expect(assignKey(base, new Set(taken))).toBe(expected);
  });
});

describe('length limits', () => {
  it.each([
    ['a long connection name', 'Acme '.repeat(30)],
    ['a long camelCase name', 'veryLongName'.repeat(20)],
    ['a name whose cut ends on a separator', `${'a'.repeat(47)} bcd`],
  ])('should cut the slug of %s to MAX_SLUG_LENGTH without a trailing _', (_label, name) => {
    const slug = slugify(name);
    expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
    expect(slug).toMatch(/^[a-z0-9]+(?:_[a-z0-9]+)*$/);
  });

  it('should cut a long operation part and keep the key within the key column', () => {
    const slug = `${'s'.repeat(61)}_99`; // a 64-character stored slug, clash suffix included
    const key = operationKey(slug, 'x'.repeat(500));
    expect(key).toBe(`connector.${slug}.${'x'.repeat(MAX_OPERATION_PART_LENGTH)}`);
    expect(assignKey(key, new Set([key])).length).toBeLessThanOrEqual(300);
  });

  it('should not cut a stored slug longer than MAX_SLUG_LENGTH, which a clash suffix can make', () => {
    const slug = `${'a'.repeat(MAX_SLUG_LENGTH)}_2`;
    expect(operationKey(slug, 'op')).toBe(`connector.${slug}.op`);
  });
});
