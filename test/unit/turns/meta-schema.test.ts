/**
 * The validator's JSON Schema 2020-12 meta-check (src/turns/dialects/rules/common.ts) runs Ajv's
 * copy of the meta-schema with its `$dynamicRef`s bound to the meta-schema itself, for speed
 * (issue 26's cold compile). It must say exactly what Ajv's own 2020-12 meta-schema says: here
 * both judge the hard-case tools' schemas, every vendored description's operations, and schemas
 * broken under every applicator keyword (where a `$dynamicRef` is what reaches them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { convertDescription } from '../../../src/openapi/convert.js';
import { parseDescription } from '../../../src/openapi/load.js';
import { PROJECT_ROOT } from '../../../src/project-root.js';
import { checkMetaSchema, Report } from '../../../src/turns/dialects/rules/common.js';
import { HARD_TOOLS } from '../../support/hard-schema-server.js';

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, logger: false });
const reference = ajv.getSchema('https://json-schema.org/draft/2020-12/schema')!;

function bound(schema: unknown): boolean {
  const report = new Report('t');
  checkMetaSchema(schema, 'rule', '', report);
  return report.violations.length === 0;
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

function vendoredSchemas(): unknown[] {
  const dir = join(PROJECT_ROOT, 'test', 'fixtures', 'openapi');
  const out: unknown[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.(json|ya?ml)$/.test(f))) {
    const { document } = parseDescription(readFileSync(join(dir, file), 'utf8'), { maxBytes: 64 << 20 });
    for (const op of convertDescription(document, `https://descriptions.example.com/${file}`, null)
      .operations)
      out.push(op.inputSchema);
  }
  return out;
}

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
    const schemas = vendoredSchemas();
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
