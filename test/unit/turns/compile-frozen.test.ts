/**
 * The compiler never changes the schema it reads (src/turns/dialects/compile.ts). Its first step,
 * normalize.ts, keeps the canonical schema's unchanged subtrees as they are instead of copying
 * them, and the canonical schema is shared by every turn and dialect (the tool cache interns it):
 * so every later step must only read. Here every hard-case tool and every vendored description's
 * operations are compiled deep-frozen, in every dialect, and must come out as from a thawed copy.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/operations/types.js';
import { FINISH_TURN } from '../../../src/turns/declare.js';
import { compileSchema } from '../../../src/turns/dialects/compile.js';
import { TOOL_DIALECTS, type ToolDialect } from '../../../src/turns/dialects/dialect.js';
import { normalizeSchema } from '../../../src/turns/dialects/normalize.js';
import { HARD_TOOLS } from '../../support/hard-schema-server.js';
import { vendoredInputSchemas } from '../../support/vendored-schemas.js';

const COMPILED = TOOL_DIALECTS.filter((d): d is Exclude<ToolDialect, 'GENERIC'> => d !== 'GENERIC');

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function schemas(): JsonObject[] {
  return [...HARD_TOOLS.map((t) => t.inputSchema), FINISH_TURN.inputSchema, ...vendoredInputSchemas()];
}

describe('the compiler only reads its input', () => {
  it('compiles every schema deep-frozen, in every dialect, as it compiles a thawed copy', () => {
    const all = schemas();
    expect(all.length).toBeGreaterThan(50);
    for (const schema of all) {
      const text = JSON.stringify(schema);
      const frozen = deepFreeze(JSON.parse(text));
      for (const dialect of COMPILED) {
        const thawed = compileSchema(dialect, JSON.parse(text));
        // A write into a frozen object throws here (modules are strict code).
        expect(compileSchema(dialect, frozen), `${dialect} ${text.slice(0, 120)}`).toEqual(thawed);
      }
      expect(JSON.stringify(frozen)).toBe(text);
    }
  });
});

describe('normalize keeps what it does not change', () => {
  it('hands back an unchanged schema itself, subtrees included', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'integer' } } },
      anyOf: [{ required: ['a'] }, { required: ['b'] }],
    };
    const out = normalizeSchema(deepFreeze(schema));
    expect(out).toEqual({ ok: true, schema });
    expect(out.ok && out.schema).toBe(schema);
  });

  it('copies only the path to what it changes, leaving its input as it was', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        kept: { type: 'object', properties: { x: { type: 'string' } } },
        item: { $ref: '#/$defs/Item' },
        flag: true,
        parts: { type: 'array', items: [{ type: 'string' }, false] },
      },
      $defs: { Item: { type: 'object', properties: { id: { type: 'string' } } } },
    };
    const text = JSON.stringify(schema);
    const out = normalizeSchema(deepFreeze(schema));
    if (!out.ok) throw new Error('not normalized');
    expect(JSON.stringify(schema)).toBe(text);
    expect(out.schema).toEqual({
      type: 'object',
      properties: {
        kept: { type: 'object', properties: { x: { type: 'string' } } },
        item: { type: 'object', properties: { id: { type: 'string' } } },
        flag: {},
        parts: { type: 'array', items: [{ type: 'string' }, { not: {} }] },
      },
    });
    const props = out.schema.properties as Record<string, unknown>;
    expect(props.kept).toBe(schema.properties.kept);
    expect(out.schema).not.toBe(schema);
    expect(out.schema.properties).not.toBe(schema.properties);
    expect((props.parts as { items: unknown[] }).items[0]).toBe(schema.properties.parts.items[0]);
  });
});
