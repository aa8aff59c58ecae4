/**
 * Issue 25, items 6 and 7 (DESIGN.md rule 17): declared per the contract, checked per the
 * description. The declared input schema keeps the first option of a union; the argument check
 * accepts any option (each under the same budgets), `null` where the description allows it (a
 * 3.1 `anyOf` null branch, as FastAPI writes `Optional`), and `null` in a nullable enum.
 * Fixtures: real operations of Stripe and OpenAI, trimmed (test/fixtures/openapi-unions/README.md).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  convertDescription,
  type ConversionResult,
  type ConvertedOperation,
} from '../../../src/openapi/convert.js';
import { compileArguments } from '../../../src/turns/arguments.js';
import type { JsonObject } from '../../../src/operations/types.js';

const fixtures = resolve(import.meta.dirname, '../../fixtures/openapi-unions');

function operations(file: string): Map<string, ConvertedOperation> {
  const document: unknown = JSON.parse(readFileSync(resolve(fixtures, file), 'utf8'));
  return new Map(convertDescription(document, null, null).operations.map((o) => [o.name, o]));
}

function accepts(schema: JsonObject, args: unknown): boolean {
  const check = compileArguments(schema);
  if (!check.ok) throw new Error(check.reason);
  return check.validate(args).ok;
}

/** What the argument check compiles: the check schema where there is one (`tool-cache.ts#argumentCheckOf`). */
const checked = (op: ConvertedOperation): JsonObject => op.checkSchema ?? op.inputSchema;

/** A description of one operation whose JSON body has these properties, converted. */
function bodyConversion(
  version: string,
  properties: Record<string, unknown>,
  components?: Record<string, unknown>,
): ConversionResult {
  const doc = {
    openapi: version,
    info: { title: 't', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      '/x': {
        post: {
          operationId: 'x',
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties } } } },
          responses: { '200': { description: 'ok' } },
        },
      },
    },
    ...(components === undefined ? {} : { components }),
  };
  return convertDescription(doc, null, null);
}

const bodyOperation = (...args: Parameters<typeof bodyConversion>): ConvertedOperation =>
  bodyConversion(...args).operations[0]!;

const stripe = operations('stripe-unions.json');
const openai = operations('openai-unions.json');
const fastapi = operations('fastapi-notes-v3.1.json');

describe('the argument check accepts every option of a union (issue 25, item 7)', () => {
  it.each<[string, Map<string, ConvertedOperation>, string, Record<string, unknown>]>([
    ['Stripe card as a token', stripe, 'PostCustomersCustomer', { customer: 'cus_1', card: 'tok_visa' }],
    [
      'Stripe bank_account as a token',
      stripe,
      'PostCustomersCustomer',
      { customer: 'cus_1', bank_account: 'btok_1' },
    ],
    ['Stripe created as an integer', stripe, 'GetCustomers', { created: 1700000000 }],
    [
      'Stripe off_session as its string enum',
      stripe,
      'PostPaymentIntentsIntentConfirm',
      { intent: 'pi_1', off_session: 'recurring' },
    ],
    [
      'OpenAI response_format json_schema',
      openai,
      'createChatCompletion',
      {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
      },
    ],
    [
      'OpenAI tool_choice as an object',
      openai,
      'createChatCompletion',
      {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        tool_choice: { type: 'function', function: { name: 'lookup' } },
      },
    ],
    [
      'OpenAI stop as an array',
      openai,
      'createChatCompletion',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stop: ['\n', 'END'] },
    ],
  ])('should accept %s, which the declared first option refuses', (_label, ops, name, args) => {
    const op = ops.get(name)!;
    expect(op.checkSchema).toBeDefined();
    expect(accepts(op.inputSchema, args)).toBe(false);
    expect(accepts(checked(op), args)).toBe(true);
  });

  it.each<[string, Map<string, ConvertedOperation>, string, Record<string, unknown>]>([
    ['Stripe card as a number', stripe, 'PostCustomersCustomer', { customer: 'cus_1', card: 42 }],
    ['Stripe created as a string', stripe, 'GetCustomers', { created: 'yesterday' }],
    [
      'Stripe off_session outside its enum',
      stripe,
      'PostPaymentIntentsIntentConfirm',
      { intent: 'pi_1', off_session: 'sometimes' },
    ],
    [
      'OpenAI tool_choice outside its modes',
      openai,
      'createChatCompletion',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'always' },
    ],
    [
      'OpenAI stop with five sequences',
      openai,
      'createChatCompletion',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stop: ['a', 'b', 'c', 'd', 'e'] },
    ],
  ])('should still refuse %s, which no option takes', (_label, ops, name, args) => {
    expect(accepts(checked(ops.get(name)!), args)).toBe(false);
  });

  it('should keep the declared schema to the first option of each union, as the contract says', () => {
    const card = (stripe.get('PostCustomersCustomer')!.inputSchema.properties as Record<string, JsonObject>)
      .card!;
    expect(card.type).toBe('object');
    expect(card.anyOf).toBeUndefined();
    const created = (stripe.get('GetCustomers')!.inputSchema.properties as Record<string, JsonObject>)
      .created!;
    expect(created.type).toBe('object');
    // Every check schema names exactly the declared fields, under the declared names.
    for (const op of [...stripe.values(), ...openai.values()]) {
      expect(Object.keys(checked(op).properties as object)).toEqual(
        Object.keys(op.inputSchema.properties as object),
      );
      expect(checked(op).required).toEqual(op.inputSchema.required);
    }
  });

  it('should apply the budgets to each option: its properties, enum values and depth', () => {
    const wide = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`p${i}`, { type: 'string' }]));
    const op = bodyOperation('3.1.0', {
      v: {
        anyOf: [
          { type: 'integer' },
          { type: 'object', properties: wide },
          { type: 'string', enum: Array.from({ length: 250 }, (_, i) => `e${i}`) },
        ],
      },
    });
    const v = (op.checkSchema!.properties as Record<string, JsonObject>).v!;
    const [, object, strings] = v.anyOf as JsonObject[];
    expect(Object.keys(object!.properties as object)).toHaveLength(64);
    expect(strings!.enum).toHaveLength(200);
    expect(accepts(op.checkSchema!, { v: 'e10' })).toBe(true);
    expect(accepts(op.checkSchema!, { v: { p1: 'a' } })).toBe(true);
    expect((op.inputSchema.properties as Record<string, JsonObject>).v).toEqual({ type: 'integer' });
  });

  it('should keep no check schema over its size cap, and say so; calls are then checked as declared', () => {
    const long = (option: number) =>
      Array.from({ length: 200 }, (_, i) => `option-${option}-value-${i}-${'x'.repeat(40)}`);
    const result = bodyConversion('3.1.0', {
      v: { anyOf: Array.from({ length: 16 }, (_, o) => ({ type: 'string', enum: long(o) })) },
    });
    const op = result.operations[0]!;
    const { diagnostics } = result;
    expect(op.checkSchema).toBeUndefined();
    expect(diagnostics).toContain(
      'a check schema over 131072 characters was left out; those calls are checked against the declared schema',
    );
  });

  it('should leave no check schema where the check is the declared schema', () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      servers: [{ url: 'https://api.example.com' }],
      paths: {
        '/x': {
          get: {
            operationId: 'x',
            parameters: [{ name: 'q', in: 'query', description: 'words', schema: { type: 'string' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    expect(convertDescription(doc, null, null).operations[0]!.checkSchema).toBeUndefined();
  });
});

describe('null where the description allows it (issue 25, items 6 and 7)', () => {
  const update = fastapi.get('update_note_notes__note_id__put')!;

  it.each<[string, Record<string, unknown>]>([
    ['a FastAPI Optional string', { note: null }],
    ['an Optional $ref', { owner: null }],
    ['an Optional array', { labels: null }],
    ['an Optional date-time', { due: null }],
  ])('should take null for %s, declared and checked', (_label, extra) => {
    const args = { note_id: 1, title: 'Groceries', ...extra };
    expect(accepts(update.inputSchema, args)).toBe(true);
    expect(accepts(checked(update), args)).toBe(true);
  });

  it('should keep the option beside the null branch, not the null branch alone', () => {
    const properties = update.inputSchema.properties as Record<string, JsonObject>;
    expect(properties.note).toEqual({
      type: ['string', 'null'],
      description: 'Free text; null clears it.',
      maxLength: 2000,
    });
    expect(properties.owner).toMatchObject({ type: ['object', 'null'], required: ['name'] });
    expect(accepts(checked(update), { note_id: 1, title: 'x', note: 7 })).toBe(false);
    expect(accepts(checked(update), { note_id: 1, title: 'x', owner: {} })).toBe(false);
  });

  it('should take null in a nullable enum, in the check, written either way', () => {
    expect(accepts(checked(update), { note_id: 1, title: 'x', priority: null })).toBe(true);
    expect(accepts(checked(update), { note_id: 1, title: 'x', priority: 'urgent' })).toBe(false);
    const op = bodyOperation(
      '3.0.3',
      {
        mode: { type: 'string', nullable: true, enum: ['a', 'b'] },
        level: { nullable: true, allOf: [{ $ref: '#/components/schemas/Level' }] },
      },
      { schemas: { Level: { type: 'integer', enum: [1, 2, 3] } } },
    );
    expect(accepts(checked(op), { mode: null, level: null })).toBe(true);
    expect(accepts(checked(op), { mode: 'c' })).toBe(false);
    expect(accepts(checked(op), { level: 4 })).toBe(false);
  });
});
