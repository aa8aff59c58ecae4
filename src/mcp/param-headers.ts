/**
 * `x-mcp-header` (2026-07-28 basic/transports/streamable-http.mdx, "Custom Headers from Tool
 * Parameters"), pure: a tool's input schema may ask for some parameters to be mirrored into
 * `Mcp-Param-{Name}` HTTP headers, which clients MUST send, and a tool whose annotations break the
 * rules MUST be left out of the listing.
 *
 * Rules: the value is a non-empty HTTP token (`1*tchar`), unique case-insensitively within the
 * schema, on a property of type `string`, `integer` or `boolean` (not `number`), reachable from the
 * root through `properties` keys only (never `items`, composition, conditionals or `$ref`). A value
 * is sent as a string (integers in decimal, booleans `true`/`false`), Base64-wrapped when it is not
 * plain header-safe ASCII; an absent or `null` value sends no header.
 */
import { encodeHeaderValue } from './versions.js';
import { isObject } from '../operations/types.js';

export const PARAM_HEADER_KEYWORD = 'x-mcp-header';

/** One mirrored parameter: the header's name part and the property path to read. */
export interface ParamHeader {
  name: string;
  path: string[];
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
/** Schemas visited per tool: a hostile schema cannot make the walk unbounded. */
const MAX_NODES = 10_000;

/**
 * The mirrored parameters of an input schema, or why the annotations are invalid (the tool must
 * then be left out).
 */
export function paramHeadersOf(
  inputSchema: Record<string, unknown>,
): { ok: true; headers: ParamHeader[] } | { ok: false; detail: string } {
  const headers: ParamHeader[] = [];
  const seen = new Set<string>();
  let nodes = 0;
  let problem: string | null = null;

  /** Every schema under `node`; `path` is its chain of `properties` keys, or null once off it. */
  const walk = (node: unknown, path: string[] | null, where: string): void => {
    if (problem !== null || ++nodes > MAX_NODES) return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, null, `${where}[${i}]`));
      return;
    }
    if (!isObject(node)) return;
    if (PARAM_HEADER_KEYWORD in node) {
      const value = node[PARAM_HEADER_KEYWORD];
      if (path === null || path.length === 0) {
        problem = `${PARAM_HEADER_KEYWORD} at ${where} is not on a property reachable through "properties" alone`;
        return;
      }
      if (typeof value !== 'string' || !TOKEN.test(value)) {
        problem = `${PARAM_HEADER_KEYWORD} at ${where} must be a non-empty HTTP token`;
        return;
      }
      if (typeof node.type !== 'string' || !PRIMITIVE.has(node.type)) {
        problem = `${PARAM_HEADER_KEYWORD} at ${where} is on a property whose type is not string, integer or boolean`;
        return;
      }
      const key = value.toLowerCase();
      if (seen.has(key)) {
        problem = `${PARAM_HEADER_KEYWORD} "${value}" appears twice (names are compared case-insensitively)`;
        return;
      }
      seen.add(key);
      headers.push({ name: value, path });
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === PARAM_HEADER_KEYWORD) continue;
      if (key === 'properties' && isObject(child) && path !== null) {
        for (const [prop, schema] of Object.entries(child))
          walk(schema, [...path, prop], `${where}.properties.${prop}`);
      } else {
        walk(child, null, `${where}.${key}`);
      }
    }
  };
  walk(inputSchema, [], 'inputSchema');
  if (problem !== null) return { ok: false, detail: problem };
  if (nodes > MAX_NODES) return { ok: false, detail: `the input schema has more than ${MAX_NODES} schemas` };
  return { ok: true, headers };
}

/** The `Mcp-Param-*` headers for a call's arguments (lower-case names, as the client sends them). */
export function paramHeaderValues(
  headers: ParamHeader[],
  args: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, path } of headers) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'boolean') text = String(value);
    else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
    else continue; // absent, null, or not what the schema allows (arguments were checked before)
    out[`mcp-param-${name.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return out;
}
