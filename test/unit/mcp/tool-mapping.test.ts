import { describe, expect, it } from 'vitest';
import {
  isIdempotent,
  mapTool,
  mapTools,
  riskOfListedAnnotations as riskFromAnnotations,
  ToolCollector,
  type ToolSkipReason,
} from '../../../src/mcp/tool-mapping.js';

const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

describe('riskFromAnnotations', () => {
  it.each([
    [undefined, 'WRITE'],
    [null, 'WRITE'],
    [{}, 'WRITE'],
    [{ readOnlyHint: true }, 'READ'],
    [{ readOnlyHint: true, destructiveHint: false }, 'READ'],
    [{ readOnlyHint: true, destructiveHint: true }, 'WRITE'],
    [{ readOnlyHint: 'true' }, 'WRITE'],
    [{ readOnlyHint: false }, 'WRITE'],
    [{ destructiveHint: false }, 'WRITE'],
    [{ readOnlyHint: true, destructiveHint: 'yes' }, 'READ'],
    [[{ readOnlyHint: true }], 'WRITE'],
  ])('should rate %j as %s', (annotations, risk) => {
    expect(riskFromAnnotations(annotations)).toBe(risk);
  });

  it('should call only idempotentHint === true idempotent', () => {
    expect(isIdempotent({ idempotentHint: true })).toBe(true);
    expect(isIdempotent({ idempotentHint: 1 })).toBe(false);
    expect(isIdempotent(undefined)).toBe(false);
  });
});

describe('mapTool', () => {
  it('should keep name, title, description, inputSchema and annotations, and ignore unknown fields', () => {
    const annotations = { readOnlyHint: true, idempotentHint: true, title: 'Annotated' };
    expect(
      mapTool({
        name: 'search',
        title: 'Search',
        description: 'Finds',
        inputSchema: schema,
        annotations,
        execution: {},
        _meta: {},
      }),
    ).toEqual({
      ok: true,
      tool: {
        name: 'search',
        title: 'Search',
        description: 'Finds',
        inputSchema: schema,
        annotations,
        outputSchema: null,
        risk: 'READ',
        idempotent: true,
      },
    });
  });

  it('should keep an object outputSchema and drop one that is not an object', () => {
    const outputSchema = { type: 'object', properties: { total: { type: 'number' } } };
    const kept = mapTool({ name: 'a', inputSchema: schema, outputSchema });
    expect(kept.ok && kept.tool.outputSchema).toEqual(outputSchema);
    const dropped = mapTool({ name: 'a', inputSchema: schema, outputSchema: 'x' });
    expect(dropped.ok && dropped.tool.outputSchema).toBeNull();
  });

  it('should take the title from annotations.title, else null', () => {
    const fromAnnotations = mapTool({
      name: 'a',
      inputSchema: schema,
      annotations: { title: 'From annotations' },
    });
    expect(fromAnnotations.ok && fromAnnotations.tool.title).toBe('From annotations');
    const none = mapTool({ name: 'a', inputSchema: schema, title: 42 });
    expect(none.ok && none.tool.title).toBeNull();
  });

  it('should accept a null description and ignore annotations that are not an object', () => {
    const mapped = mapTool({ name: 'a', inputSchema: schema, description: null, annotations: 'x' });
    expect(mapped).toMatchObject({ ok: true, tool: { description: null, annotations: null, risk: 'WRITE' } });
  });

  it('should accept a name of exactly 128 characters with dots, dashes and unicode letters', () => {
    expect(mapTool({ name: 'a'.repeat(128), inputSchema: schema }).ok).toBe(true);
    expect(mapTool({ name: 'files.read-v2_ü', inputSchema: schema }).ok).toBe(true);
  });

  it.each<[string, unknown, ToolSkipReason, string]>([
    ['a string', 'tool', 'NOT_AN_OBJECT', 'a tool must be an object, got "tool"'],
    ['null', null, 'NOT_AN_OBJECT', 'a tool must be an object, got null'],
    [
      'no name',
      { inputSchema: schema },
      'NAME_MISSING',
      'a tool needs a non-empty string name, got a undefined',
    ],
    [
      'an empty name',
      { name: '', inputSchema: schema },
      'NAME_MISSING',
      'a tool needs a non-empty string name, got ""',
    ],
    [
      'a numeric name',
      { name: 7, inputSchema: schema },
      'NAME_MISSING',
      'a tool needs a non-empty string name, got a number',
    ],
    [
      'a 129-character name',
      { name: 'a'.repeat(129), inputSchema: schema },
      'NAME_INVALID',
      'the name is 129 characters, over 128',
    ],
    [
      'a name with a space',
      { name: 'get user', inputSchema: schema },
      'NAME_INVALID',
      'the name holds whitespace or control characters',
    ],
    [
      'a name with a tab',
      { name: 'get\tuser', inputSchema: schema },
      'NAME_INVALID',
      'the name holds whitespace or control characters',
    ],
    [
      'a name with NUL',
      { name: 'get\u0000', inputSchema: schema },
      'NAME_INVALID',
      'the name holds whitespace or control characters',
    ],
    [
      'a name with a non-breaking space',
      { name: 'a\u00a0b', inputSchema: schema },
      'NAME_INVALID',
      'the name holds whitespace or control characters',
    ],
    [
      'inputSchema "string"',
      { name: 'a', inputSchema: 'string' },
      'INPUT_SCHEMA_INVALID',
      'inputSchema must be an object schema, got "string"',
    ],
    [
      'no inputSchema',
      { name: 'a' },
      'INPUT_SCHEMA_INVALID',
      'inputSchema must be an object schema, got a undefined',
    ],
    [
      'an array inputSchema',
      { name: 'a', inputSchema: [] },
      'INPUT_SCHEMA_INVALID',
      'inputSchema must be an object schema, got an array',
    ],
    [
      'inputSchema of type string',
      { name: 'a', inputSchema: { type: 'string' } },
      'INPUT_SCHEMA_INVALID',
      'inputSchema.type must be "object", got "string"',
    ],
    [
      'inputSchema without type',
      { name: 'a', inputSchema: { properties: {} } },
      'INPUT_SCHEMA_INVALID',
      'inputSchema.type must be "object", got a undefined',
    ],
    [
      'a numeric description',
      { name: 'a', inputSchema: schema, description: 3 },
      'DESCRIPTION_INVALID',
      'description must be a string, got a number',
    ],
  ])('should skip %s', (_label, raw, reason, detail) => {
    expect(mapTool(raw)).toEqual({ ok: false, reason, detail });
  });

  it('should skip a definition over 64 KB', () => {
    const raw = { name: 'big', inputSchema: schema, description: 'x'.repeat(64 * 1024) };
    const size = Buffer.byteLength(JSON.stringify(raw));
    expect(mapTool(raw)).toEqual({
      ok: false,
      reason: 'DEFINITION_TOO_LARGE',
      detail: `the definition is ${size} bytes, over 65536`,
    });
  });
});

describe('ToolCollector', () => {
  it('should keep the first of duplicate names across pages and skip the rest with a reason', () => {
    const c = new ToolCollector();
    c.add([
      { name: 'a', inputSchema: schema, description: 'first' },
      { name: 'b', inputSchema: schema },
    ]);
    c.add([{ name: 'a', inputSchema: schema, description: 'second' }]);
    expect(c.tools.map((t) => [t.name, t.description])).toEqual([
      ['a', 'first'],
      ['b', null],
    ]);
    expect(c.skipped).toEqual([
      {
        index: 2,
        name: 'a',
        reason: 'DUPLICATE_NAME',
        detail: 'an earlier tool has the same name; the first one is kept',
      },
    ]);
  });

  it('should let a valid tool take a name whose first holder was invalid', () => {
    const { tools, skipped } = mapTools([
      { name: 'a', inputSchema: 'string' },
      { name: 'a', inputSchema: schema },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['a']);
    expect(skipped.map((s) => [s.index, s.reason])).toEqual([[0, 'INPUT_SCHEMA_INVALID']]);
  });

  it('should stop keeping at the limit and skip the rest as TOOL_LIMIT', () => {
    const raw = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, inputSchema: schema }));
    const c = new ToolCollector(3);
    c.add(raw);
    expect(c.full).toBe(true);
    expect(c.tools.map((t) => t.name)).toEqual(['t0', 't1', 't2']);
    expect(c.skipped.map((s) => [s.index, s.name, s.reason])).toEqual([
      [3, 't3', 'TOOL_LIMIT'],
      [4, 't4', 'TOOL_LIMIT'],
    ]);
    expect(c.seen).toBe(5);
  });

  it('should report a hostile name cut to 200 characters', () => {
    const { skipped } = mapTools([{ name: 'x'.repeat(10_000), inputSchema: schema }]);
    expect(skipped[0]?.name).toHaveLength(200);
    expect(skipped[0]?.reason).toBe('NAME_INVALID');
  });
});
