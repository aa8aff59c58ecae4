/**
 * The validator's JSON Schema 2020-12 meta-check (src/turns/dialects/rules/common.ts) runs Ajv's
 * copy of the meta-schema with its `$dynamicRef`s bound to the meta-schema itself, for speed
 * (issue 26's cold compile). It must say exactly what Ajv's own 2020-12 meta-schema says: here
 * both judge the hard-case tools' schemas, every vendored description's operations, and schemas
 * broken under every applicator keyword (where a `$dynamicRef` is what reaches them).
 *
 * OpenAI strict mode runs it cut to the keywords strict mode supports (every other keyword is a
 * violation of its own there): on schemas that use only those, the cut must judge as Ajv does.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../../src/turns/dialects/compile.js';
import { checkDeclaration } from '../../../src/turns/dialects/rules.js';
import { checkMetaSchema, Report } from '../../../src/turns/dialects/rules/common.js';
import { OPENAI_STRICT_KEYWORDS } from '../../../src/turns/dialects/rules/openai.js';
import { HARD_TOOLS } from '../../support/hard-schema-server.js';
import { vendoredInputSchemas } from '../../support/vendored-schemas.js';

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, logger: false });
const reference = ajv.getSchema('https://json-schema.org/draft/2020-12/schema')!;

function bound(schema: unknown, keywords: ReadonlySet<string> | null = null): boolean {
  const report = new Report('t');
  checkMetaSchema(schema, 'rule', '', report, keywords);
  return report.violations.length === 0;
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether every subschema (under strict mode's applicators) has only strict mode's keywords. */
function onlyStrictKeywords(schema: unknown): boolean {
  if (!isPlain(schema)) return true;
  if (Object.keys(schema).some((k) => !OPENAI_STRICT_KEYWORDS.has(k))) return false;
  const children: unknown[] = [schema.items, schema.additionalProperties];
  if (Array.isArray(schema.anyOf)) children.push(...(schema.anyOf as unknown[]));
  for (const map of [schema.properties, schema.$defs, schema.definitions])
    if (isPlain(map)) children.push(...Object.values(map));
  return children.every(onlyStrictKeywords);
}

/** A value no meta-schema takes where a schema belongs. */
const BAD_LEAF = { type: 'no-such-type', minimum: 'x' };

/** The same bad leaf under each keyword that holds subschemas, and a few bad keyword values. */
const BROKEN: unknown[] = [
  { type: 5 },
  { required: [1] },
  { anyOf: [] },
  { enum: 'x' },
  { minLength: -1 },
  { $ref: 5 },
  // The core keywords, whose names the binding must leave alone where they are properties.
  { $dynamicRef: 5 },
  { $dynamicAnchor: 5 },
  { $schema: 5 },
  { $vocabulary: 5 },
  { $anchor: '1-not-an-anchor' },
  { $comment: 5 },
  { $id: 5 },
  { properties: { a: BAD_LEAF } },
  { patternProperties: { '^a': BAD_LEAF } },
  { additionalProperties: BAD_LEAF },
  { items: BAD_LEAF },
  { prefixItems: [BAD_LEAF] },
  { contains: BAD_LEAF },
  { anyOf: [BAD_LEAF] },
  { oneOf: [{}, BAD_LEAF] },
  { allOf: [BAD_LEAF] },
  { not: BAD_LEAF },
  { if: BAD_LEAF },
  { then: BAD_LEAF },
  { else: BAD_LEAF },
  { dependentSchemas: { a: BAD_LEAF } },
  { propertyNames: BAD_LEAF },
  { unevaluatedProperties: BAD_LEAF },
  { unevaluatedItems: BAD_LEAF },
  { $defs: { a: BAD_LEAF } },
  { definitions: { a: BAD_LEAF } },
  { contentSchema: BAD_LEAF },
  { properties: { a: { items: { anyOf: [{ properties: { b: BAD_LEAF } }] } } } },
  'not a schema',
  [],
  null,
];

/** Good schemas: the hard cases, booleans, and the keywords above with good values. */
const GOOD: unknown[] = [
  true,
  false,
  {},
  ...HARD_TOOLS.map((t) => t.inputSchema),
  ...BROKEN.filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null)
    .map((s) => JSON.parse(JSON.stringify(s).replaceAll('"no-such-type"', '"string"').replaceAll('"x"', '1')))
    .filter((s) => reference(s) === true),
];

describe('the bound 2020-12 meta-schema', () => {
  it('refuses every broken schema Ajv refuses, under every applicator', () => {
    for (const schema of BROKEN) {
      expect(reference(schema), JSON.stringify(schema)).toBe(false);
      expect(bound(schema), JSON.stringify(schema)).toBe(false);
    }
  });

  it('takes every good schema Ajv takes', () => {
    expect(GOOD.length).toBeGreaterThan(BROKEN.length);
    for (const schema of GOOD) {
      expect(reference(schema), JSON.stringify(schema).slice(0, 200)).toBe(true);
      expect(bound(schema), JSON.stringify(schema).slice(0, 200)).toBe(true);
    }
  });

  it('agrees with Ajv on every vendored description operation', () => {
    const schemas = vendoredInputSchemas();
    expect(schemas.length).toBeGreaterThan(50);
    for (const schema of schemas) expect(bound(schema)).toBe(reference(schema));
  });

  it('points at the offending value, as Ajv does', () => {
    const report = new Report('t');
    checkMetaSchema({ properties: { a: { items: { minLength: -1 } } } }, 'rule', '/p', report);
    expect(report.violations).toEqual([
      expect.objectContaining({ rule: 'rule', path: '/p/properties/a/items/minLength' }),
    ]);
  });
});

describe("the meta-check cut to strict mode's keywords", () => {
  const strictOutputs = (): Record<string, unknown>[] =>
    [...HARD_TOOLS.map((t) => t.inputSchema), ...vendoredInputSchemas()]
      .map((s) => compileSchema('OPENAI_STRICT', s))
      .flatMap((c) => (c.ok && c.schema !== null ? [c.schema] : []));

  it('judges as Ajv does every schema, good or broken, that uses only those keywords', () => {
    const cases = [...BROKEN, ...GOOD].filter(onlyStrictKeywords);
    expect(cases.filter((s) => reference(s) === false).length).toBeGreaterThan(10);
    expect(cases.filter((s) => reference(s) === true).length).toBeGreaterThan(10);
    for (const schema of cases)
      expect(bound(schema, OPENAI_STRICT_KEYWORDS), JSON.stringify(schema).slice(0, 200)).toBe(
        reference(schema),
      );
  });

  it('passes every compiled strict schema, and refuses each one broken deep inside, as Ajv does', () => {
    const outputs = strictOutputs();
    expect(outputs.length).toBeGreaterThan(50);
    const breaks: [string, unknown][] = [
      ['type', 'no-such-type'],
      ['required', [1]],
      ['anyOf', []],
      ['enum', 'x'],
      ['minItems', -1],
      ['maximum', 'x'],
      ['multipleOf', 0],
      ['$ref', 5],
      ['description', 5],
      ['pattern', 5],
      ['properties', []],
      ['additionalProperties', 'x'],
      ['items', 5],
      ['$defs', 5],
    ];
    let broken = 0;
    for (const schema of outputs) {
      expect(onlyStrictKeywords(schema)).toBe(true);
      expect(reference(schema)).toBe(true);
      expect(bound(schema, OPENAI_STRICT_KEYWORDS)).toBe(true);
      // The deepest first property's schema, along properties and anyOf options.
      const copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
      let node = copy;
      for (;;) {
        const props = node.properties;
        const next = isPlain(props)
          ? Object.values(props)[0]
          : Array.isArray(node.anyOf)
            ? node.anyOf[0]
            : undefined;
        if (!isPlain(next)) break;
        node = next;
      }
      const [keyword, value] = breaks[broken++ % breaks.length]!;
      node[keyword] = value;
      expect(reference(copy), keyword).toBe(false);
      expect(bound(copy, OPENAI_STRICT_KEYWORDS), keyword).toBe(false);
    }
  });

  it("leaves any other keyword to strict mode's own rule, which refuses the declaration", () => {
    const schema = {
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
      minLength: -1,
    };
    expect(reference(schema)).toBe(false);
    expect(bound(schema, OPENAI_STRICT_KEYWORDS)).toBe(true);
    const declaration = { type: 'function', function: { name: 'f', parameters: schema, strict: true } };
    expect(checkDeclaration('OPENAI_STRICT', declaration).map((v) => v.rule)).toEqual([
      'openai.strict.keyword',
    ]);
    expect(checkDeclaration('OPENAI', declaration).map((v) => v.rule)).toEqual([
      'openai.strict.flag',
      'openai.schema.valid',
    ]);
  });

  it('refuses to be cut to a keyword the meta-schema does not have', () => {
    expect(() => bound({}, new Set(['type', 'no-such-keyword']))).toThrow(/no-such-keyword/);
  });
});
