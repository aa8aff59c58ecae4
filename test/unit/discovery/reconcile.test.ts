import { describe, expect, it } from 'vitest';
import {
  type DiscoveredOperation,
  jsonEqual,
  NO_PROPERTIES_DETAIL,
  reconcile,
  type ReconcilePlan,
  type ReviewReasonDraft,
  type StoredOperation,
} from '../../../src/discovery/reconcile.js';
import { isAppError } from '../../../src/errors.js';
import { type JsonObject, type OpenApiBinding } from '../../../src/operations/types.js';

const SLUG = 'petstore';

function schema(...names: string[]): JsonObject {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
    additionalProperties: false,
  };
}

function binding(
  method: OpenApiBinding['method'],
  path: string,
  extra: Partial<OpenApiBinding> = {},
): OpenApiBinding {
  return {
    method,
    path,
    baseUrl: 'https://api.example.com',
    bodyEncoding: null,
    wholeBody: false,
    fields: [],
    ...extra,
  };
}

function found(name: string, over: Partial<DiscoveredOperation> = {}): DiscoveredOperation {
  return {
    name,
    title: null,
    description: `Does ${name}.`,
    inputSchema: schema('id'),
    annotations: { readOnlyHint: true },
    risk: 'READ',
    idempotent: false,
    binding: null,
    ...over,
  };
}

function kept(name: string, over: Partial<StoredOperation> = {}): StoredOperation {
  return {
    ...found(name),
    id: `id-${name}`,
    key: `connector.${SLUG}.${name}`,
    enabled: true,
    riskSetByAdmin: false,
    openReasons: [],
    ...over,
    // Unless a test says otherwise, the stored risk is the source's own.
    sourceRisk: over.sourceRisk ?? over.risk ?? 'READ',
  };
}

function plan(
  stored: StoredOperation[],
  discovered: DiscoveredOperation[],
  takenKeys: Iterable<string> = stored.map((s) => s.key),
): ReconcilePlan {
  return reconcile(stored, discovered, { connectionSlug: SLUG, takenKeys: new Set(takenKeys) });
}

/** What `discover.ts` would store after applying the plan, for idempotence checks. */
function applyPlan(stored: StoredOperation[], result: ReconcilePlan): StoredOperation[] {
  const removed = new Set(result.remove.map((r) => r.id));
  const updates = new Map(result.update.map((u) => [u.id, u]));
  const next = stored
    .filter((s) => !removed.has(s.id))
    .map((s): StoredOperation => {
      const u = updates.get(s.id);
      if (!u) return s;
      return {
        ...s,
        ...u.after,
        enabled: u.disable ? false : s.enabled,
        openReasons: [...s.openReasons, ...u.newReasons],
      };
    });
  for (const a of result.add) {
    next.push({
      ...a.op,
      id: `new-${a.key}`,
      key: a.key,
      enabled: a.enabled,
      riskSetByAdmin: false,
      sourceRisk: a.op.risk,
      openReasons: [],
    });
  }
  return next;
}

describe('reconcile: review triggers on an existing operation', () => {
  it.each<[string, Partial<StoredOperation>, Partial<DiscoveredOperation>, ReviewReasonDraft[]]>([
    ['a new description', {}, { description: 'Better words.' }, []],
    ['a new title', {}, { title: 'List pets' }, []],
    ['new non-risk annotations', {}, { annotations: { readOnlyHint: true, title: 'x' } }, []],
    ['a changed idempotency', {}, { idempotent: true }, []],
    [
      'a risk raised from READ to WRITE',
      { risk: 'READ' },
      { risk: 'WRITE' },
      [{ code: 'RISK_RAISED', detail: 'READ → WRITE' }],
    ],
    ['a risk lowered from WRITE to READ', { risk: 'WRITE' }, { risk: 'READ' }, []],
    // The admin's risk stays and nothing is raised; only sourceRisk is written.
    ['a source raise under an admin-set READ', { risk: 'READ', riskSetByAdmin: true }, { risk: 'WRITE' }, []],
    [
      'a source lowering under an admin-set WRITE',
      { risk: 'WRITE', riskSetByAdmin: true },
      { risk: 'READ' },
      [],
    ],
    [
      'one argument added',
      { inputSchema: schema('id') },
      { inputSchema: schema('id', 'limit') },
      [{ code: 'ARGUMENTS_ADDED', detail: 'limit' }],
    ],
    [
      'several arguments added, named in sorted order',
      { inputSchema: schema('id') },
      { inputSchema: schema('zeta', 'id', 'alpha', 'Beta') },
      [{ code: 'ARGUMENTS_ADDED', detail: 'Beta, alpha, zeta' }],
    ],
    [
      'arguments removed',
      { inputSchema: schema('id', 'b', 'a') },
      { inputSchema: schema('id') },
      [{ code: 'ARGUMENTS_UNDESCRIBED', detail: 'a, b' }],
    ],
    [
      'an argument renamed',
      { inputSchema: schema('petId') },
      { inputSchema: schema('pet_id') },
      [
        { code: 'ARGUMENTS_ADDED', detail: 'pet_id' },
        { code: 'ARGUMENTS_UNDESCRIBED', detail: 'petId' },
      ],
    ],
    [
      'a schema that became free-form',
      { inputSchema: schema('id', 'name') },
      { inputSchema: { type: 'object' } },
      [{ code: 'ARGUMENTS_UNDESCRIBED', detail: `id, name (${NO_PROPERTIES_DETAIL})` }],
    ],
    [
      'a schema with no arguments that became free-form',
      { inputSchema: schema() },
      { inputSchema: { type: 'object', additionalProperties: true } },
      [{ code: 'ARGUMENTS_UNDESCRIBED', detail: NO_PROPERTIES_DETAIL }],
    ],
    [
      'properties given as an array (free-form)',
      { inputSchema: schema('id') },
      { inputSchema: { type: 'object', properties: ['id'] } },
      [{ code: 'ARGUMENTS_UNDESCRIBED', detail: `id (${NO_PROPERTIES_DETAIL})` }],
    ],
    ['a free-form schema that stays free-form', { inputSchema: { type: 'object' } }, { inputSchema: {} }, []],
    [
      'a free-form schema that now lists arguments',
      { inputSchema: { type: 'object' } },
      { inputSchema: schema('q') },
      [{ code: 'ARGUMENTS_ADDED', detail: 'q' }],
    ],
    [
      'a nested property change only',
      { inputSchema: { type: 'object', properties: { pet: { type: 'object', properties: { a: {} } } } } },
      { inputSchema: { type: 'object', properties: { pet: { type: 'object', properties: { b: {} } } } } },
      [],
    ],
    [
      'a required list change only',
      { inputSchema: { ...schema('id'), required: [] } },
      { inputSchema: { ...schema('id'), required: ['id'] } },
      [],
    ],
    [
      'a method change',
      { binding: binding('GET', '/a') },
      { binding: binding('POST', '/a') },
      [{ code: 'ENDPOINT_CHANGED', detail: 'GET /a → POST /a' }],
    ],
    [
      'a path template change',
      { binding: binding('GET', '/pets/{id}') },
      { binding: binding('GET', '/animals/{id}') },
      [{ code: 'ENDPOINT_CHANGED', detail: 'GET /pets/{id} → GET /animals/{id}' }],
    ],
    [
      'a base address on another host (the credential would go elsewhere)',
      { binding: binding('GET', '/a') },
      { binding: binding('GET', '/a', { baseUrl: 'https://b.example.com' }) },
      [{ code: 'ENDPOINT_CHANGED', detail: 'https://api.example.com → https://b.example.com' }],
    ],
    [
      'a base address path change on the same host only',
      { binding: binding('GET', '/a') },
      { binding: binding('GET', '/a', { baseUrl: 'https://api.example.com/v2' }) },
      [],
    ],
    [
      'a field location change only',
      { binding: binding('POST', '/a', { fields: [{ name: 'x', in: 'query', wireName: 'x' }] }) },
      { binding: binding('POST', '/a', { fields: [{ name: 'x', in: 'body', wireName: 'x' }] }) },
      [],
    ],
    [
      'all four triggers at once, in code order',
      { risk: 'READ', inputSchema: schema('a', 'b'), binding: binding('GET', '/a') },
      { risk: 'WRITE', inputSchema: schema('a', 'c'), binding: binding('DELETE', '/a') },
      [
        { code: 'RISK_RAISED', detail: 'READ → WRITE' },
        { code: 'ARGUMENTS_ADDED', detail: 'c' },
        { code: 'ARGUMENTS_UNDESCRIBED', detail: 'b' },
        { code: 'ENDPOINT_CHANGED', detail: 'GET /a → DELETE /a' },
      ],
    ],
    [
      'an added argument and a raise under an admin-set risk',
      { risk: 'READ', riskSetByAdmin: true, inputSchema: schema('a') },
      { risk: 'WRITE', inputSchema: schema('a', 'b') },
      [{ code: 'ARGUMENTS_ADDED', detail: 'b' }],
    ],
  ])('should review %s', (_label, before, source, expectedReasons) => {
    const stored = kept('listPets', before);
    const discovered = found('listPets', source);
    const result = plan([stored], [discovered]);

    expect(result.add).toEqual([]);
    expect(result.remove).toEqual([]);
    expect(result.update).toHaveLength(1);
    const [u] = result.update;
    expect(u?.id).toBe(stored.id);
    expect(u?.before).toBe(stored);
    expect(u?.newReasons).toEqual(expectedReasons);
    expect(u?.disable).toBe(expectedReasons.length > 0);
    expect(u?.changed).toBe(true);
    // Everything but an admin-set risk follows the source.
    expect(u?.after).toEqual({
      title: discovered.title,
      description: discovered.description,
      inputSchema: discovered.inputSchema,
      outputSchema: null,
      annotations: discovered.annotations,
      binding: discovered.binding,
      risk: stored.riskSetByAdmin ? stored.risk : discovered.risk,
      sourceRisk: discovered.risk,
      idempotent: discovered.idempotent,
    });
    expect(result.counts).toEqual({
      added: 0,
      removed: 0,
      updated: 1,
      flagged: expectedReasons.length > 0 ? 1 : 0,
    });
  });
});

describe('reconcile: open reasons', () => {
  const raise = { code: 'RISK_RAISED', detail: 'READ → WRITE' } as const;
  const added = { code: 'ARGUMENTS_ADDED', detail: 'limit' } as const;

  it.each<[string, ReviewReasonDraft[], ReviewReasonDraft[]]>([
    ['no open reason', [], [raise, added]],
    ['the same reason already open', [added], [raise]],
    ['both reasons already open', [raise, added], []],
    ['same code, other detail', [{ code: 'ARGUMENTS_ADDED', detail: 'offset' }], [raise, added]],
    ['same detail, other code', [{ code: 'ARGUMENTS_UNDESCRIBED', detail: 'limit' }], [raise, added]],
  ])('should add only the reasons not already open, with %s', (_label, openReasons, expected) => {
    const result = plan(
      [kept('listPets', { enabled: false, inputSchema: schema('id'), openReasons })],
      [found('listPets', { risk: 'WRITE', inputSchema: schema('id', 'limit') })],
    );
    expect(result.update[0]?.newReasons).toEqual(expected);
    expect(result.update[0]?.disable).toBe(true);
    expect(result.counts.flagged).toBe(1);
  });

  it('should leave open reasons alone when nothing triggers', () => {
    const result = plan([kept('listPets', { enabled: false, openReasons: [added] })], [found('listPets')]);
    expect(result.update[0]).toMatchObject({ disable: false, newReasons: [], changed: false });
  });
});

describe('reconcile: the fields an update writes', () => {
  it('should name exactly the fields that differ, so that nothing else is written', () => {
    const result = plan(
      [kept('listPets', { description: 'old', inputSchema: schema('id') })],
      [found('listPets', { description: 'new', inputSchema: schema('id', 'limit') })],
    );
    expect(result.update[0]?.changedFields.sort()).toEqual(['description', 'inputSchema']);
  });

  it('should write a new or dropped check schema without a review (issue 25, item 7)', () => {
    const check = {
      type: 'object',
      properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    };
    const gained = plan(
      [kept('listPets', { inputSchema: schema('id') })],
      [found('listPets', { checkSchema: check })],
    );
    expect(gained.update[0]).toMatchObject({ changedFields: ['checkSchema'], changed: true, disable: false });
    expect(gained.update[0]?.after.checkSchema).toEqual(check);
    const dropped = plan([kept('listPets', { checkSchema: check })], [found('listPets')]);
    expect(dropped.update[0]).toMatchObject({
      changedFields: ['checkSchema'],
      changed: true,
      disable: false,
    });
    expect(dropped.update[0]?.after.checkSchema).toBeNull();
    const same = plan(
      [kept('listPets', { checkSchema: check })],
      [found('listPets', { checkSchema: check })],
    );
    expect(same.update[0]).toMatchObject({ changedFields: [], changed: false });
  });

  it('should name no field when only key order differs', () => {
    const result = plan(
      [kept('listPets', { inputSchema: { properties: { id: { type: 'string' } }, type: 'object' } })],
      [found('listPets', { inputSchema: { type: 'object', properties: { id: { type: 'string' } } } })],
    );
    expect(result.update[0]).toMatchObject({ changedFields: [], changed: false });
  });
});

describe('reconcile: unchanged re-discovery', () => {
  it.each<[string, Partial<StoredOperation>, Partial<DiscoveredOperation>]>([
    ['an MCP tool', {}, {}],
    [
      'an OpenAPI operation',
      { binding: binding('GET', '/pets'), annotations: null },
      { binding: binding('GET', '/pets'), annotations: null },
    ],
    [
      'a schema with its keys in another order',
      {
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'string', format: 'uuid' }, b: {} },
          required: ['a'],
        },
      },
      {
        inputSchema: {
          required: ['a'],
          properties: { b: {}, a: { format: 'uuid', type: 'string' } },
          type: 'object',
        },
      },
    ],
    [
      'a binding with its keys in another order',
      { binding: binding('POST', '/x', { fields: [{ name: 'n', in: 'body', wireName: 'n' }] }) },
      {
        binding: {
          fields: [{ wireName: 'n', in: 'body', name: 'n' }],
          wholeBody: false,
          bodyEncoding: null,
          baseUrl: 'https://api.example.com',
          path: '/x',
          method: 'POST',
        },
      },
    ],
    [
      'an admin-set WRITE over an unchanged READ source',
      { risk: 'WRITE', riskSetByAdmin: true, sourceRisk: 'READ' },
      { risk: 'READ' },
    ],
    [
      'an admin-set READ over an unchanged WRITE source',
      { risk: 'READ', riskSetByAdmin: true, sourceRisk: 'WRITE' },
      { risk: 'WRITE' },
    ],
    ['a disabled operation', { enabled: false }, {}],
  ])('should plan no write for %s', (_label, before, source) => {
    const stored = kept('listPets', before);
    const result = plan([stored], [found('listPets', source)]);
    expect(result.update).toHaveLength(1);
    expect(result.update[0]).toMatchObject({ changed: false, disable: false, newReasons: [] });
    expect(result.counts).toEqual({ added: 0, removed: 0, updated: 0, flagged: 0 });
  });

  it.each<[string, StoredOperation[], DiscoveredOperation[]]>([
    ['a first discovery', [], [found('a'), found('b', { risk: 'WRITE' })]],
    [
      'a mix of adds, removals, refreshes and reviews',
      [kept('a'), kept('b', { binding: binding('GET', '/b') }), kept('gone')],
      [
        found('a', { description: 'new' }),
        found('b', { risk: 'WRITE', binding: binding('PUT', '/b') }),
        found('c'),
      ],
    ],
    [
      'a schema that went free-form',
      [kept('a', { inputSchema: schema('x') })],
      [found('a', { inputSchema: { type: 'object' } })],
    ],
  ])(
    'should change nothing when the same source is discovered again after %s',
    (_label, stored, discovered) => {
      const first = plan(stored, discovered);
      const after = applyPlan(stored, first);
      const second = plan(after, discovered);
      expect(second.add).toEqual([]);
      expect(second.remove).toEqual([]);
      expect(second.update.every((u) => !u.changed && !u.disable && u.newReasons.length === 0)).toBe(true);
      expect(second.counts).toEqual({ added: 0, removed: 0, updated: 0, flagged: 0 });
    },
  );
});

describe('reconcile: adds, removals and keys', () => {
  it.each<[string, DiscoveredOperation, boolean]>([
    ['a READ tool', found('listPets', { risk: 'READ' }), true],
    ['a WRITE tool', found('deletePet', { risk: 'WRITE', annotations: { destructiveHint: true } }), false],
    ['a READ OpenAPI operation', found('getPet', { binding: binding('GET', '/pets/{id}') }), true],
    [
      'a WRITE OpenAPI operation',
      found('createPet', { risk: 'WRITE', binding: binding('POST', '/pets') }),
      false,
    ],
  ])('should add %s enabled: %s', (_label, op, enabled) => {
    const result = plan([], [op]);
    expect(result.add).toEqual([
      { op, key: expect.stringMatching(/^connector\.petstore\./), enabled, reasons: [] },
    ]);
    expect(result.counts).toEqual({ added: 1, removed: 0, updated: 0, flagged: 0 });
  });

  it.each<[string, StoredOperation[], DiscoveredOperation[], string[], string[]]>([
    ['a new name', [], [found('listPets')], [], ['connector.petstore.list_pets']],
    [
      'two new names making one key',
      [],
      [found('listPets'), found('list-pets'), found('list_pets')],
      [],
      ['connector.petstore.list_pets', 'connector.petstore.list_pets_2', 'connector.petstore.list_pets_3'],
    ],
    [
      'a key taken by another connection',
      [],
      [found('search')],
      ['connector.petstore.search'],
      ['connector.petstore.search_2'],
    ],
    [
      'a key and its _2 taken elsewhere',
      [],
      [found('search')],
      ['connector.petstore.search', 'connector.petstore.search_2'],
      ['connector.petstore.search_3'],
    ],
    [
      'a rename whose new name makes the removed key',
      [kept('listPets', { key: 'connector.petstore.list_pets' })],
      [found('list_pets')],
      [],
      ['connector.petstore.list_pets_2'],
    ],
    [
      'a stored key the caller left out of takenKeys',
      [kept('x', { key: 'connector.petstore.get_pet' })],
      [found('x'), found('getPet')],
      [],
      ['connector.petstore.get_pet_2'],
    ],
    [
      'an operation coming back whose retired key is reserved',
      [],
      [found('listPets')],
      ['connector.petstore.list_pets'],
      ['connector.petstore.list_pets_2'],
    ],
    [
      'an operation coming back twice with both retired keys reserved',
      [],
      [found('listPets')],
      ['connector.petstore.list_pets', 'connector.petstore.list_pets_2'],
      ['connector.petstore.list_pets_3'],
    ],
    ['an operation name with no letters', [], [found('🎉')], [], ['connector.petstore.operation']],
  ])('should key %s', (_label, stored, discovered, takenKeys, expectedKeys) => {
    const result = plan(stored, discovered, takenKeys);
    expect(result.add.map((a) => a.key)).toEqual(expectedKeys);
  });

  it('should remove operations the source no longer lists, in stored order', () => {
    const stored = [kept('c'), kept('a'), kept('b')];
    const result = plan(stored, [found('a')]);
    expect(result.remove).toEqual([stored[0], stored[2]]);
    expect(result.counts).toEqual({ added: 0, removed: 2, updated: 0, flagged: 0 });
  });

  it('should treat a rename as a removal plus an addition that starts over', () => {
    const old = kept('getPet', {
      key: 'connector.petstore.get_pet',
      risk: 'READ',
      riskSetByAdmin: true,
      openReasons: [{ code: 'ARGUMENTS_ADDED', detail: 'x' }],
    });
    const renamed = found('fetchPet', { risk: 'WRITE' });
    const result = plan([old], [renamed]);
    expect(result.remove).toEqual([old]);
    expect(result.update).toEqual([]);
    // The admin's READ does not carry over: the new operation is WRITE, so it starts off.
    expect(result.add).toEqual([
      { op: renamed, key: 'connector.petstore.fetch_pet', enabled: false, reasons: [] },
    ]);
    expect(result.counts).toEqual({ added: 1, removed: 1, updated: 0, flagged: 0 });
  });

  it('should give an operation that comes back after its deletion no history of the old one', () => {
    const before = [
      kept('listPets', { key: 'connector.petstore.list_pets', riskSetByAdmin: true, risk: 'WRITE' }),
    ];
    const deleted = plan(before, [found('other')]);
    expect(deleted.remove.map((r) => r.key)).toEqual(['connector.petstore.list_pets']);

    const afterDelete = applyPlan(before, deleted);
    const retired = ['connector.petstore.list_pets'];
    const back = plan(
      afterDelete,
      [found('other'), found('listPets')],
      [...afterDelete.map((s) => s.key), ...retired],
    );
    expect(back.update.map((u) => u.before.name)).toEqual(['other']);
    expect(back.add).toEqual([
      { op: found('listPets'), key: 'connector.petstore.list_pets_2', enabled: true, reasons: [] },
    ]);
  });

  it.each<[string, Partial<DiscoveredOperation>]>([
    ['description', { description: 'Completely new words.' }],
    ['schema', { inputSchema: schema('id', 'limit') }],
    ['title and annotations', { title: 'T', annotations: { readOnlyHint: true, openWorldHint: true } }],
    ['risk', { risk: 'WRITE' }],
  ])('should keep the key of an existing operation whose %s changed', (_label, source) => {
    const stored = kept('listPets', { key: 'connector.petstore.list_pets_7' });
    const result = plan([stored], [found('listPets', source)]);
    expect(result.add).toEqual([]);
    expect(result.update[0]?.before.key).toBe('connector.petstore.list_pets_7');
    expect(result.update[0]?.after).not.toHaveProperty('key');
  });

  it('should keep the first of two discovered operations with one name and report the second', () => {
    const first = found('dup', { description: 'first' });
    const result = plan([], [first, found('dup', { description: 'second' })]);
    expect(result.add).toEqual([{ op: first, key: 'connector.petstore.dup', enabled: true, reasons: [] }]);
    expect(result.skipped).toEqual([{ name: 'dup', reason: expect.stringContaining('duplicate name') }]);
  });

  it('should match the first of two stored rows with one name and remove the second', () => {
    const a = kept('dup', { id: 'one' });
    const b = kept('dup', { id: 'two', key: 'connector.petstore.dup_2' });
    const result = plan([a, b], [found('dup')]);
    expect(result.update.map((u) => u.id)).toEqual(['one']);
    expect(result.remove).toEqual([b]);
  });

  it('should refuse an empty discovered list, which would delete everything', () => {
    let thrown: unknown;
    try {
      plan([kept('a')], []);
    } catch (err) {
      thrown = err;
    }
    expect(isAppError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'EMPTY_TOOL_LIST' });
  });

  it('should count a mixed plan', () => {
    const result = plan(
      [kept('same'), kept('refreshed'), kept('flagged'), kept('gone')],
      [
        found('same'),
        found('refreshed', { description: 'new' }),
        found('flagged', { risk: 'WRITE' }),
        found('new'),
      ],
    );
    expect(result.add.map((a) => a.op.name)).toEqual(['new']);
    expect(result.remove.map((r) => r.name)).toEqual(['gone']);
    expect(result.update.map((u) => [u.before.name, u.changed, u.disable])).toEqual([
      ['same', false, false],
      ['refreshed', true, false],
      ['flagged', true, true],
    ]);
    expect(result.counts).toEqual({ added: 1, removed: 1, updated: 2, flagged: 1 });
  });
});

describe('jsonEqual', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal primitives', 1, 1, true],
    ['different primitives', 1, '1', false],
    ['null and null', null, null, true],
    ['null and an object', null, {}, false],
    ['key order', { a: 1, b: { c: [1, 2], d: null } }, { b: { d: null, c: [1, 2] }, a: 1 }, true],
    ['array order', [1, 2], [2, 1], false],
    ['array lengths', [1], [1, 1], false],
    ['an array and an object', [], {}, false],
    ['an undefined property as absent', { a: 1, b: undefined }, { a: 1 }, true],
    ['an extra property', { a: 1, b: 2 }, { a: 1 }, false],
    ['a null property against an absent one', { a: 1, b: null }, { a: 1 }, false],
    ['same count, different keys', { a: 1 }, { b: 1 }, false],
    ['nested difference', { a: { b: [{ c: 1 }] } }, { a: { b: [{ c: 2 }] } }, false],
  ])('should compare %s', (_label, a, b, expected) => {
    expect(jsonEqual(a, b)).toBe(expected);
    expect(jsonEqual(b, a)).toBe(expected);
  });
});

describe('reconcile: holds (key origins, uncallable bases)', () => {
  const hold: ReviewReasonDraft = {
    code: 'KEY_ORIGIN_NOT_GIVEN',
    detail: 'calls go to https://evil.example.net, but the key was given for https://api.example.com',
  };
  const uncallable: ReviewReasonDraft = { code: 'BASE_ADDRESS_UNCALLABLE', detail: 'placeholder' };

  it('should add a held READ operation disabled, with its holds as reasons, and count it as flagged', () => {
    const op = found('exfiltrate', { binding: binding('GET', '/x'), holds: [hold] });
    const result = plan([], [op]);
    expect(result.add).toEqual([
      { op, key: 'connector.petstore.exfiltrate', enabled: false, reasons: [hold] },
    ]);
    expect(result.counts.flagged).toBe(1);
  });

  it('should turn an enabled operation off when a hold appears, and not add the reason twice', () => {
    const result = plan([kept('getPet')], [found('getPet', { holds: [hold] })]);
    expect(result.update[0]).toMatchObject({
      disable: true,
      newReasons: [hold],
      resolved: [],
      release: false,
    });
    const again = plan(
      [kept('getPet', { enabled: false, openReasons: [hold] })],
      [found('getPet', { holds: [hold] })],
    );
    expect(again.update[0]).toMatchObject({ disable: true, newReasons: [], changed: false, release: false });
  });

  it('should resolve a hold whose condition cleared and release an operation held by nothing else', () => {
    const result = plan(
      [kept('getPet', { enabled: false, openReasons: [hold, uncallable] })],
      [found('getPet')],
    );
    expect(result.update[0]).toMatchObject({
      disable: false,
      resolved: [hold, uncallable],
      release: true,
      changed: true,
    });
  });

  it('should resolve a cleared hold but keep an operation with a review reason off', () => {
    const risk: ReviewReasonDraft = { code: 'RISK_RAISED', detail: 'READ → WRITE' };
    const result = plan([kept('getPet', { enabled: false, openReasons: [hold, risk] })], [found('getPet')]);
    expect(result.update[0]).toMatchObject({ resolved: [hold], release: false });
  });

  it('should replace a hold whose detail changed (another unrecorded origin)', () => {
    const moved: ReviewReasonDraft = {
      code: 'KEY_ORIGIN_NOT_GIVEN',
      detail: 'calls go to https://other.example.org',
    };
    const result = plan(
      [kept('getPet', { enabled: false, openReasons: [hold] })],
      [found('getPet', { holds: [moved] })],
    );
    expect(result.update[0]).toMatchObject({
      disable: true,
      newReasons: [moved],
      resolved: [hold],
      release: false,
    });
  });
});

describe('reconcile: releasing an operation held for want of a callable base', () => {
  it('should not ask for a review when the base moves to the override that releases it', () => {
    const uncallable: ReviewReasonDraft = { code: 'BASE_ADDRESS_UNCALLABLE', detail: 'placeholder' };
    const before = kept('getPet', {
      enabled: false,
      binding: binding('GET', '/x', { baseUrl: 'https://azure.local' }),
      openReasons: [uncallable],
    });
    const result = plan([before], [found('getPet', { binding: binding('GET', '/x') })]);
    expect(result.update[0]).toMatchObject({ disable: false, newReasons: [], release: true });
  });

  it('should still ask for a review when the method or path changed too', () => {
    const uncallable: ReviewReasonDraft = { code: 'BASE_ADDRESS_UNCALLABLE', detail: 'placeholder' };
    const before = kept('getPet', {
      enabled: false,
      binding: binding('GET', '/x', { baseUrl: 'https://azure.local' }),
      openReasons: [uncallable],
    });
    const result = plan([before], [found('getPet', { binding: binding('POST', '/x') })]);
    expect(result.update[0]!.newReasons.map((r) => r.code)).toEqual(['ENDPOINT_CHANGED']);
    expect(result.update[0]!.release).toBe(false);
  });
});
