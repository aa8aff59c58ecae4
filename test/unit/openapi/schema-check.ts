/**
 * An independent checker for produced input schemas: it knows the contract's limits, not the
 * converter's code. Each problem is returned as a readable line so a failing test says where.
 */
import { Ajv } from 'ajv';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface SchemaLimits {
  maxDepth: number;
  maxProperties: number;
  maxEnum: number;
}

export const CONTRACT_LIMITS: SchemaLimits = { maxDepth: 5, maxProperties: 64, maxEnum: 200 };

/** Containers (schemas that list properties, items or additionalProperties) nested along the longest path. */
export function containerDepth(schema: unknown): number {
  if (!isObject(schema)) return 0;
  const children: unknown[] = [];
  if (isObject(schema.properties)) children.push(...Object.values(schema.properties));
  if (isObject(schema.items)) children.push(schema.items);
  if (isObject(schema.additionalProperties)) children.push(schema.additionalProperties);
  if (children.length === 0) return 0;
  return 1 + Math.max(...children.map(containerDepth));
}

const compiled = new Set<string>();

/** Every problem with one input schema; empty when it meets the contract. */
export function checkInputSchema(
  ajv: Ajv,
  schema: unknown,
  limits: SchemaLimits = CONTRACT_LIMITS,
): string[] {
  const problems: string[] = [];
  if (!isObject(schema)) return ['the schema is not an object'];
  // The YAML and JSON copies of a description give the same schemas: compile each text once.
  const text = JSON.stringify(schema);
  if (!compiled.has(text)) {
    compiled.add(text);
    try {
      ajv.compile(schema);
    } catch (error) {
      problems.push(`does not compile: ${(error as Error).message}`);
    }
  }
  if (schema.type !== 'object') problems.push('root type is not "object"');
  if (schema.additionalProperties !== false) problems.push('root additionalProperties is not false');
  const depth = containerDepth(schema);
  if (depth > limits.maxDepth) problems.push(`depth ${depth} > ${limits.maxDepth}`);
  const walk = (node: unknown, at: string): void => {
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      const names = Object.keys(node.properties);
      if (names.length > limits.maxProperties) problems.push(`${at}: ${names.length} properties`);
      for (const name of names)
        if (!NAME.test(name)) problems.push(`${at}: invalid name ${JSON.stringify(name)}`);
      if (node.additionalProperties !== false)
        problems.push(`${at}: lists properties without additionalProperties:false`);
      if (Array.isArray(node.required)) {
        for (const name of node.required) {
          if (typeof name !== 'string' || !Object.hasOwn(node.properties, name)) {
            problems.push(`${at}: required ${JSON.stringify(name)} is not a property`);
          }
        }
      }
      for (const name of names) walk(node.properties[name], `${at}.${name}`);
    } else if (node.required !== undefined) {
      problems.push(`${at}: required without properties`);
    }
    if (Array.isArray(node.enum) && node.enum.length > limits.maxEnum) {
      problems.push(`${at}: enum of ${node.enum.length}`);
    }
    walk(node.items, `${at}[]`);
    walk(node.additionalProperties, `${at}{}`);
  };
  walk(schema, '$');
  return problems;
}

export function newAjv(): Ajv {
  return new Ajv({ strict: false, validateFormats: false, logger: false, code: { optimize: false } });
}
