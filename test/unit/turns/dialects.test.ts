/**
 * The per-dialect compiler (src/turns/dialects/), checked by the independent validator
 * (rules.ts): every OpenAPI description in the vendored fixtures (and the full corpus beside the
 * checkout when it is there) and every hard-case MCP tool, in every dialect, gives 0 rule
 * violations; every tool is declared or left out with a reason; and arguments round-trip.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { convertDescription } from '../../../src/openapi/convert.js';
import { parseDescription } from '../../../src/openapi/load.js';
import type { JsonObject, JsonValue } from '../../../src/operations/types.js';
import { isObject } from '../../../src/operations/types.js';
import { compileArguments } from '../../../src/turns/arguments.js';
import { declareTools, FINISH_TURN, type DeclarableOperation } from '../../../src/turns/declare.js';
import { compileSchema } from '../../../src/turns/dialects/compile.js';
import { compileToolList, MAX_TOOLS } from '../../../src/turns/dialects/declarations.js';
import { decodeArguments } from '../../../src/turns/dialects/decode.js';
import { TOOL_DIALECTS, type ToolDialect } from '../../../src/turns/dialects/dialect.js';
import { normalizeSchema } from '../../../src/turns/dialects/normalize.js';
import { checkDeclarationList } from '../../../src/turns/dialects/rules.js';
import { asJsonSchema, encodeArguments, passes } from '../../support/dialect-roundtrip.js';
import { HARD_TOOLS } from '../../support/hard-schema-server.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const shared = resolve(repoRoot, '../shared/corpus/openapi');
const corpusDir = existsSync(join(shared, 'MANIFEST.tsv'))
  ? shared
  : resolve(repoRoot, 'test/fixtures/openapi');
const COMPILED = TOOL_DIALECTS.filter((d): d is Exclude<ToolDialect, 'GENERIC'> => d !== 'GENERIC');

const BUILT_IN = {
  name: 'web_search',
  description: 'Searches the web.',
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', minLength: 1 } },
    required: ['query'],
  },
};

function ops(
  slug: string,
  tools: readonly { name: string; description: string | null; inputSchema: JsonObject }[],
): DeclarableOperation[] {
  return tools.map((t, i) => ({
    operationId: `${slug}-${i}`,
    connectionSlug: slug,
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
  }));
}

/** Arguments valid against most schemas: every property given, the first option, the lowest bound. */
function sample(node: JsonValue | undefined, depth = 0): JsonValue {
  if (!isObject(node) || depth > 14) return 'x';
  if (node.const !== undefined) return node.const;
  if (Array.isArray(node.enum)) return node.enum.find((v) => v !== null) ?? null;
  const options = (node.anyOf ?? node.oneOf) as JsonValue[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const first = options.find((o) => !(isObject(o) && o.type === 'null')) ?? options[0];
    const { anyOf: _a, oneOf: _o, ...rest } = node;
    return sample(isObject(first) ? { ...rest, ...first } : first, depth + 1);
  }
  const types = typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? node.type : [];
  const type =
    types.find((t) => t !== 'null') ??
    (isObject(node.properties) ? 'object' : node.items ? 'array' : undefined);
  switch (type) {
    case 'object': {
      const out: JsonObject = {};
      if (isObject(node.properties))
        for (const [k, v] of Object.entries(node.properties)) out[k] = sample(v, depth + 1);
      return out;
    }
    case 'array':
      return [sample(node.items, depth + 1)];
    case 'integer':
      return typeof node.minimum === 'number' ? Math.ceil(node.minimum) : 1;
    case 'number':
      return typeof node.minimum === 'number' ? node.minimum : 1.5;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string': {
      if (node.format === 'date-time') return '2026-01-02T03:04:05Z';
      if (node.format === 'date') return '2026-01-02';
      if (node.format === 'email') return 'ada@example.com';
      const min = typeof node.minLength === 'number' ? node.minLength : 1;
      return 'x'.repeat(Math.max(1, min));
    }
    default:
      return { any: [1, 'two'] };
  }
}

interface RoundTrip {
  ok: boolean;
  why?: string;
}

/** One tool's canonical arguments through `dialect`'s declared schema and back. */
function roundTrip(
  dialect: Exclude<ToolDialect, 'GENERIC'>,
  schema: JsonObject,
  canonical: JsonObject,
): RoundTrip {
  const compiled = compileSchema(dialect, schema);
  if (!compiled.ok) return { ok: true };
  const written = encodeArguments(compiled.shape, canonical, dialect === 'OPENAI_STRICT') as JsonObject;
  if (compiled.schema !== null) {
    const declared = passes(asJsonSchema(dialect, compiled.schema), written);
    if (!declared.ok)
      return { ok: false, why: `the model's arguments fail the declared schema: ${declared.errors}` };
  }
  const decoded = decodeArguments(compiled.shape, written);
  if (!decoded.ok) return { ok: false, why: `not decoded: ${decoded.field} ${decoded.problem}` };
  try {
    expect(decoded.args).toEqual(canonical);
  } catch {
    return {
      ok: false,
      why: `decoded ${JSON.stringify(decoded.args).slice(0, 300)} != ${JSON.stringify(canonical).slice(0, 300)}`,
    };
  }
  const check = compileArguments(schema);
  if (check.ok && !check.validate(decoded.args).ok)
    return { ok: false, why: 'the decoded arguments fail the canonical check' };
  return { ok: true };
}

const ROUND_TRIPS_PER_FILE = 12;
let roundTrips = 0;
const files = readdirSync(corpusDir).filter((f) => /\.(json|ya?ml)$/.test(f));

describe(`every description × every dialect (${corpusDir.includes('shared') ? 'full corpus' : 'vendored fixtures'})`, () => {
  it.each(files)('%s', { timeout: 300_000 }, (file) => {
    let operations;
    try {
      const { document } = parseDescription(readFileSync(join(corpusDir, file), 'utf8'), {
        maxBytes: 64 * 1024 * 1024,
      });
      operations = convertDescription(document, `https://descriptions.example.com/${file}`, null).operations;
    } catch {
      return; // refused by the contract (tested in the OpenAPI corpus test)
    }
    const list = declareTools({ builtIns: [BUILT_IN], operations: ops('api', operations) });
    const canonicalValid = compileArgumentsCache(operations);
    let trips = 0;
    for (const dialect of TOOL_DIALECTS) {
      const compiled = compileToolList(dialect, list, (id) => id);
      expect(
        checkDeclarationList(
          dialect,
          compiled.tools.map((t) => t.declaration),
        ),
      ).toEqual([]);
      // Every tool is declared or left out with a reason; none is dropped silently.
      expect(compiled.tools.length + compiled.leftOut.length).toBe(list.tools.length);
      for (const l of compiled.leftOut) expect(l.reason.length).toBeGreaterThan(10);
      expect(compiled.tools.at(-1)?.name).toBe(FINISH_TURN.name);
      if (dialect === 'GENERIC') {
        expect(compiled.leftOut).toEqual([]);
        compiled.tools.forEach((t, i) => {
          expect(t.declaration).toEqual({
            name: list.tools[i]!.name,
            description: list.tools[i]!.description,
            inputSchema: list.tools[i]!.inputSchema,
          });
          expect(t.declaration.inputSchema).toBe(list.tools[i]!.inputSchema);
        });
        continue;
      }
      const cap = MAX_TOOLS[dialect];
      if (cap !== null) expect(compiled.tools.length).toBeLessThanOrEqual(cap);
      for (const [i, op] of operations.entries()) {
        // Every tool is compiled and checked above; a spread of them (Ajv is slow) also round-trips.
        if (i % Math.ceil(operations.length / ROUND_TRIPS_PER_FILE) !== 0) continue;
        const args = canonicalValid[i];
        if (args === null || args === undefined) continue;
        const trip = roundTrip(dialect, op.inputSchema, args);
        if (!trip.ok) throw new Error(`${dialect} ${op.name}: ${trip.why}`);
        trips++;
      }
    }
    roundTrips += trips;
  });

  it('should have round-tripped arguments of many operations in every dialect', () => {
    // Samples that fail an operation's own canonical check (patterns, formats) are skipped.
    expect(roundTrips).toBeGreaterThan(files.length * 2);
  });
});

/** Strict mode cannot say "null" for an optional property (null there means "not given"). */
function stripNulls(dialect: ToolDialect, args: JsonObject): JsonObject {
  if (dialect !== 'OPENAI_STRICT') return args;
  const walk = (v: JsonValue): JsonValue =>
    Array.isArray(v)
      ? v.map(walk)
      : isObject(v)
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== null)
              .map(([k, x]) => [k, walk(x)]),
          )
        : v;
  return walk(args) as JsonObject;
}

/** Per operation, sample arguments that pass its canonical check, or null when the sample does not. */
function compileArgumentsCache(operations: readonly { inputSchema: JsonObject }[]): (JsonObject | null)[] {
  return operations.map((op, i) => {
    if (i % Math.ceil(operations.length / ROUND_TRIPS_PER_FILE) !== 0) return null;
    const normalized = normalizeSchema(op.inputSchema);
    if (!normalized.ok) return null;
    const args = sample(normalized.schema) as JsonObject;
    const check = compileArguments(op.inputSchema);
    return check.ok && check.validate(args).ok ? args : null;
  });
}

describe('the hard-case tools × every dialect', () => {
  const list = declareTools({ builtIns: [BUILT_IN], operations: ops('hard', HARD_TOOLS) });

  it.each(COMPILED)(
    '%s: every tool declared passes the rules, the rest are listed with a reason',
    (dialect) => {
      const compiled = compileToolList(dialect, list, (id) => id);
      expect(
        checkDeclarationList(
          dialect,
          compiled.tools.map((t) => t.declaration),
        ),
      ).toEqual([]);
      expect(compiled.tools.length + compiled.leftOut.length).toBe(list.tools.length);
      // Only strict mode has caps the wide tool can break; everything else is declared.
      const left = compiled.leftOut.map((l) => l.name);
      if (dialect === 'OPENAI_STRICT') expect(left).toEqual(['hard__wide_report']);
      else expect(left).toEqual([]);
    },
  );

  it.each(COMPILED.flatMap((d) => HARD_TOOLS.map((t) => [d, t.name] as const)))(
    '%s: %s round-trips its example',
    { timeout: 120_000 },
    (dialect, name) => {
      const tool = HARD_TOOLS.find((t) => t.name === name)!;
      const trip = roundTrip(dialect, tool.inputSchema, stripNulls(dialect, tool.example));
      expect(trip.why ?? '').toBe('');
    },
  );
});

describe('what each dialect is given', () => {
  const schema: JsonObject = {
    type: 'object',
    properties: {
      'user.email': { type: 'string', format: 'email', description: 'Where to write.' },
      count: { type: 'integer', exclusiveMinimum: 0, multipleOf: 2 },
      tags: { type: 'array' },
      extra: { type: 'object', additionalProperties: true },
      mode: { enum: ['', 'fast', 'slow'] },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    },
    required: ['user.email'],
    additionalProperties: false,
  };

  it('should give Gemini parameters no additionalProperties, no exclusiveMinimum, and a name it takes', () => {
    const out = compileSchema('GEMINI', schema);
    if (!out.ok) throw new Error(out.reason);
    const text = JSON.stringify(out.schema);
    expect(text).not.toContain('additionalProperties');
    expect(text).not.toContain('exclusiveMinimum');
    expect(text).not.toContain('multipleOf');
    const props = out.schema!.properties as JsonObject;
    expect(Object.keys(props)).toEqual(['user_email', 'count', 'tags', 'extra', 'mode', 'note']);
    expect((props.count as JsonObject).description).toBe('(more than 0; a multiple of 2)');
    expect(props.note).toEqual({ type: 'string', nullable: true });
    // The empty-string enum value cannot be declared: the values are described instead.
    expect(props.mode).toEqual({ type: 'string', description: '(one of: "", "fast", "slow")' });
    // An array without items and a free-form object are JSON text there.
    expect((props.tags as JsonObject).type).toBe('string');
    expect((props.extra as JsonObject).type).toBe('string');
    expect(out.schema!.required).toEqual(['user_email']);
  });

  it('should make every property required and the optional ones nullable in OpenAI strict mode', () => {
    const out = compileSchema('OPENAI_STRICT', schema);
    if (!out.ok) throw new Error(out.reason);
    const s = out.schema!;
    expect(s.additionalProperties).toBe(false);
    expect(s.required).toEqual(['user.email', 'count', 'tags', 'extra', 'mode', 'note']);
    const props = s.properties as JsonObject;
    expect((props.count as JsonObject).type).toEqual(['integer', 'null']);
    expect((props.mode as JsonObject).enum).toEqual(['', 'fast', 'slow', null]);
    expect(props['user.email']).toEqual({ type: 'string', format: 'email', description: 'Where to write.' });
    // A null for an optional property means "not given"; a null the canonical schema takes stays.
    const decoded = decodeArguments(out.shape, {
      'user.email': 'a@example.com',
      count: null,
      tags: '["a", 1]',
      extra: null,
      mode: null,
      note: null,
    });
    expect(decoded).toEqual({
      ok: true,
      changed: true,
      args: { 'user.email': 'a@example.com', tags: ['a', 1] },
    });
  });

  it('should keep a JSON Schema dialect close to the canonical schema', () => {
    const out = compileSchema('ANTHROPIC', schema);
    if (!out.ok) throw new Error(out.reason);
    const props = out.schema!.properties as JsonObject;
    expect(props.tags).toEqual({ type: 'array', items: {} });
    expect(props.count).toEqual({ type: 'integer', exclusiveMinimum: 0, multipleOf: 2 });
    expect(props.note).toEqual({ type: ['string', 'null'] });
    expect(out.schema!.additionalProperties).toBe(false);
    expect(out.shape).toBeNull();
  });

  it('should describe what an untyped node’s dropped keywords meant, in every dialect', () => {
    const untyped: JsonObject = {
      type: 'object',
      properties: { present: { not: { type: 'null' }, default: 1 } },
    };
    for (const dialect of COMPILED) {
      const out = compileSchema(dialect, untyped);
      if (!out.ok) throw new Error(out.reason);
      const present = (out.schema!.properties as JsonObject).present as JsonObject;
      expect(present.not, dialect).toBeUndefined();
      expect(present.description, dialect).toContain('some values are excluded');
      expect(present.description, dialect).toContain('default: 1');
    }
  });

  it('should merge a root union into one object for every dialect', () => {
    const root: JsonObject = {
      anyOf: [
        { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
      ],
    };
    for (const dialect of COMPILED) {
      const out = compileSchema(dialect, root);
      if (!out.ok) throw new Error(out.reason);
      expect(out.schema!.type).toBe('object');
      expect(out.schema!.anyOf).toBeUndefined();
      expect(Object.keys(out.schema!.properties as JsonObject)).toEqual(['id', 'email']);
      expect(JSON.stringify(out.schema!.description)).toContain('[requires id]');
    }
  });

  it('should cut a recursive $ref into a permissive schema, and inline the others', () => {
    const tree: JsonObject = {
      $defs: {
        Node: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/Node' } },
          },
        },
      },
      type: 'object',
      properties: { root: { $ref: '#/$defs/Node' } },
    };
    const out = compileSchema('ANTHROPIC', tree);
    if (!out.ok) throw new Error(out.reason);
    const text = JSON.stringify(out.schema);
    expect(text).not.toContain('$ref');
    expect(text).not.toContain('$defs');
    expect(text).toContain('Any value (recursive).');
  });

  it('should refuse to decode JSON text that does not parse, and two keys for one field', () => {
    const out = compileSchema('GEMINI', schema);
    if (!out.ok) throw new Error(out.reason);
    expect(decodeArguments(out.shape, { user_email: 'a', tags: '[1,' })).toEqual({
      ok: false,
      field: 'tags',
      problem: 'must be JSON text (it was declared as a string holding JSON)',
    });
    expect(decodeArguments(out.shape, { user_email: 'a', 'user.email': 'b' })).toMatchObject({
      ok: false,
      field: 'user.email',
    });
    // A key such as __proto__ stays a plain key.
    const proto = decodeArguments(
      out.shape,
      JSON.parse('{"user_email":"a","__proto__":{"x":1}}') as JsonObject,
    );
    expect(proto.ok && Object.hasOwn(proto.args, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('should leave connection tools past OpenAI’s 128 out with TOOL_LIMIT, keeping built-ins and finish_turn', () => {
    const many = Array.from({ length: 140 }, (_, i) => ({
      name: `op_${String(i).padStart(3, '0')}`,
      description: 'd',
      inputSchema: { type: 'object', properties: {} },
    }));
    const list = declareTools({ builtIns: [BUILT_IN], operations: ops('many', many) });
    for (const dialect of ['OPENAI', 'OPENAI_STRICT', 'GEMINI'] as const) {
      const compiled = compileToolList(dialect, list, (id) => id);
      expect(compiled.tools).toHaveLength(128);
      expect(compiled.tools[0]!.name).toBe('web_search');
      expect(compiled.tools.at(-1)!.name).toBe('finish_turn');
      expect(compiled.leftOut).toHaveLength(142 - 128);
      expect(compiled.leftOut.every((l) => l.code === 'TOOL_LIMIT')).toBe(true);
      expect(Object.keys(compiled.map)).toHaveLength(126);
    }
    expect(compileToolList('ANTHROPIC', list, (id) => id).tools).toHaveLength(142);
  });

  it('should wrap each declaration the way its API takes it', () => {
    const list = declareTools({
      builtIns: [],
      operations: ops('shop', [
        {
          name: 'find',
          description: 'Finds.',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ]),
    });
    const first = (d: ToolDialect) => compileToolList(d, list, (id) => id).tools[0]!.declaration;
    expect(first('OPENAI')).toEqual({
      type: 'function',
      function: {
        name: 'shop__find',
        description: 'Finds.',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
      },
    });
    expect(first('OPENAI_STRICT')).toEqual({
      type: 'function',
      function: {
        name: 'shop__find',
        description: 'Finds.',
        strict: true,
        parameters: {
          type: 'object',
          properties: { q: { type: ['string', 'null'], description: 'Optional: null means not given.' } },
          required: ['q'],
          additionalProperties: false,
        },
      },
    });
    expect(first('ANTHROPIC')).toEqual({
      name: 'shop__find',
      description: 'Finds.',
      input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    });
    expect(first('GEMINI')).toEqual({
      name: 'shop__find',
      description: 'Finds.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
    });
    expect(first('GEMINI_JSON_SCHEMA')).toEqual({
      name: 'shop__find',
      description: 'Finds.',
      parametersJsonSchema: { type: 'object', properties: { q: { type: 'string' } } },
    });
    // finish_turn has no parameters: Gemini declares none.
    expect(compileToolList('GEMINI', list, (id) => id).tools.at(-1)!.declaration).toEqual({
      name: 'finish_turn',
      description: FINISH_TURN.description,
    });
  });
});
