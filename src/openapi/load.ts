/**
 * Fetching and parsing an OpenAPI or Swagger description: the I/O around `convert.ts`.
 *
 * Error codes (all `AppError`):
 * - `DESCRIPTION_TOO_LARGE`: the text is over `maxBytes` (5 MiB) as UTF-8.
 * - `DESCRIPTION_INVALID`: not JSON or YAML, YAML aliases that expand too far or refer to
 *   themselves, nesting deeper than `maxNesting`, or not an OpenAPI 3.0/3.1 or Swagger 2.0 object.
 * - `DESCRIPTION_FETCH_FAILED`: the fetch failed with an error that was not already an `AppError`.
 *   An `AppError` from `fetchText` (such as the outbound client's own codes) passes through.
 */
import { CORE_SCHEMA, load } from 'js-yaml';
import { AppError, isAppError } from '../errors.js';
import { MAX_DESCRIPTION_BYTES } from '../limits.js';
import { type DescriptionVersion, detectVersion } from './convert.js';

/** The contract's 5 MB, read as 5 MiB, measured as UTF-8 bytes. */
export const DEFAULT_MAX_DESCRIPTION_BYTES = MAX_DESCRIPTION_BYTES;
/**
 * Nesting of objects and arrays. Real descriptions stay under 30 levels; the bound keeps the YAML
 * parser's recursion and every later walk of the document far from the stack limit.
 */
export const DEFAULT_MAX_NESTING = 128;
/**
 * Nodes a YAML document may have once its aliases are expanded. The parser shares aliased nodes,
 * so a "billion laughs" document parses in milliseconds; anything that later walks it as a tree
 * would not finish. Without aliases a 5 MiB text cannot come near this.
 */
export const DEFAULT_MAX_EXPANDED_NODES = 5_000_000;

export type DescriptionSource = { text: string } | { url: string };

export interface LoadDeps {
  /**
   * Fetches the description through the outbound client. It reads at most `maxBytes` and throws
   * an `AppError` with code `DESCRIPTION_TOO_LARGE` past that; other failures throw its own errors.
   */
  fetchText: (url: string, maxBytes: number) => Promise<string>;
}

export interface LoadOptions {
  maxBytes?: number;
  maxNesting?: number;
  maxExpandedNodes?: number;
}

export interface LoadedDescription {
  /** The parsed document: an object whose version `detectVersion` recognised. */
  document: Record<string, unknown>;
  version: DescriptionVersion;
  format: 'json' | 'yaml';
  /** The text's size in UTF-8 bytes. */
  bytes: number;
  /** The address it was fetched from, or `null` for text given directly. */
  url: string | null;
}

/** Loads a description given as text or fetched from an address, then parses and recognises it. */
export async function loadDescription(
  source: DescriptionSource,
  deps: LoadDeps,
  options: LoadOptions = {},
): Promise<LoadedDescription> {
  const { text, url } = await readDescriptionText(source, deps, options);
  const parsed = parseDescription(text, options);
  return { ...parsed, url };
}

/** The text of a description: given, or fetched from its address (I/O only; no parsing). */
export async function readDescriptionText(
  source: DescriptionSource,
  deps: LoadDeps,
  options: Pick<LoadOptions, 'maxBytes'> = {},
): Promise<{ text: string; url: string | null }> {
  const { maxBytes = DEFAULT_MAX_DESCRIPTION_BYTES } = options;
  if (!('url' in source)) return { text: source.text, url: null };
  const url = source.url;
  try {
    return { text: await deps.fetchText(url, maxBytes), url };
  } catch (error) {
    if (isAppError(error)) throw error;
    throw new AppError('DESCRIPTION_FETCH_FAILED', `The description could not be fetched from ${url}.`, {
      cause: error,
    });
  }
}

/** Parses description text (JSON, or YAML 1.2 with the core schema) and recognises its version. */
export function parseDescription(text: string, options: LoadOptions = {}): Omit<LoadedDescription, 'url'> {
  const {
    maxBytes = DEFAULT_MAX_DESCRIPTION_BYTES,
    maxNesting = DEFAULT_MAX_NESTING,
    maxExpandedNodes = DEFAULT_MAX_EXPANDED_NODES,
  } = options;
  // A fetcher that ignored its cap must still not get past here.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new AppError(
      'DESCRIPTION_TOO_LARGE',
      `The description is ${bytes} bytes; the limit is ${maxBytes} bytes.`,
    );
  }
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let document: unknown;
  let format: 'json' | 'yaml';
  const first = /\S/.exec(body)?.[0];
  if (first === undefined) throw new AppError('DESCRIPTION_INVALID', 'The description is empty.');
  const json = first === '{' || first === '[' ? tryJson(body) : undefined;
  if (json !== undefined) {
    document = json.value;
    format = 'json';
    checkNesting(document, maxNesting);
  } else {
    document = parseYaml(body, maxNesting);
    format = 'yaml';
    // Without an anchor there is no alias: the parser's own depth limit then bounds the tree.
    if (hasYamlAnchor(body)) checkYamlGraph(document, maxNesting, maxExpandedNodes);
  }
  const version = detectVersion(document);
  return { document: document as Record<string, unknown>, version, format, bytes };
}

/** Characters after which a node, and so an anchor, may start. */
const BEFORE_ANCHOR = new Set([' ', '\t', '\n', '\r', '[', '{', ',', ':']);
/** Characters that cannot start an anchor name. */
const NOT_ANCHOR_NAME = new Set([' ', '\t', '\n', '\r', '[', ']', '{', '}', ',']);

/**
 * Whether the text may hold a YAML anchor (`&name` where a node may start). Text such as "R&D"
 * does not count; "a &amp; b" does, which only costs a walk. Looks at each `&` only, as a regular
 * expression over megabytes of text would cost more than the walk it saves.
 */
function hasYamlAnchor(text: string): boolean {
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    const before = i === 0 ? '\n' : (text[i - 1] as string);
    const after = text[i + 1];
    if (BEFORE_ANCHOR.has(before) && after !== undefined && !NOT_ANCHOR_NAME.has(after)) return true;
  }
  return false;
}

function tryJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    // YAML flow style also starts with `{`; the YAML parser gives the better message.
    return undefined;
  }
}

function parseYaml(text: string, maxNesting: number): unknown {
  try {
    // CORE_SCHEMA is YAML 1.2: `ON`, `OFF`, `yes` and `no` stay strings, and `<<` is not a merge.
    return load(text, { schema: CORE_SCHEMA, maxDepth: maxNesting });
  } catch (error) {
    const reason = error instanceof Error ? firstLine(error.message) : 'unknown error';
    throw new AppError(
      'DESCRIPTION_INVALID',
      `The description is neither valid JSON nor valid YAML: ${reason}`,
      {
        cause: error,
      },
    );
  }
}

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').slice(0, 300);
}

/** Bounds the nesting of a parsed JSON tree without recursion (JSON has no shared nodes). */
function checkNesting(root: unknown, maxNesting: number): void {
  const stack: { children: unknown[]; next: number }[] = [];
  let node = root;
  for (;;) {
    if (typeof node === 'object' && node !== null) {
      if (stack.length >= maxNesting) throw tooDeep(maxNesting);
      stack.push({ children: Array.isArray(node) ? node : Object.values(node), next: 0 });
    }
    let top = stack[stack.length - 1];
    while (top !== undefined && top.next >= top.children.length) {
      stack.pop();
      top = stack[stack.length - 1];
    }
    if (top === undefined) return;
    node = top.children[top.next++];
  }
}

function tooDeep(maxNesting: number): AppError {
  return new AppError('DESCRIPTION_INVALID', `The description nests deeper than ${maxNesting} levels.`);
}

/**
 * Bounds a parsed YAML graph without recursion: its nesting, its node count once aliases are
 * expanded (memoised per shared node, so the work is linear in the distinct nodes) and the absence
 * of cycles (an alias inside its own anchor).
 */
function checkYamlGraph(root: unknown, maxNesting: number, maxExpandedNodes: number): void {
  if (typeof root !== 'object' || root === null) return;
  /** Expanded size of a finished node; `-1` while it is on the stack. */
  const sizes = new Map<object, number>();
  const stack: { node: object; children: unknown[]; next: number; size: number }[] = [];
  const enter = (node: object): void => {
    if (stack.length >= maxNesting) throw tooDeep(maxNesting);
    sizes.set(node, -1);
    stack.push({ node, children: Array.isArray(node) ? node : Object.values(node), next: 0, size: 1 });
  };
  enter(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as (typeof stack)[number];
    if (top.next < top.children.length) {
      const child = top.children[top.next++];
      if (typeof child !== 'object' || child === null) {
        top.size++;
      } else {
        const known = sizes.get(child);
        if (known === undefined) {
          enter(child);
          continue;
        }
        if (known < 0) {
          throw new AppError(
            'DESCRIPTION_INVALID',
            'The description has a YAML alias that refers to itself.',
          );
        }
        top.size += known;
      }
      if (top.size > maxExpandedNodes) {
        throw new AppError(
          'DESCRIPTION_INVALID',
          `The description's YAML aliases expand to more than ${maxExpandedNodes} nodes; refused as an alias bomb.`,
        );
      }
    } else {
      stack.pop();
      sizes.set(top.node, top.size);
      const parent = stack[stack.length - 1];
      if (parent !== undefined) parent.size += top.size;
    }
  }
  const total = sizes.get(root) ?? 0;
  if (total > maxExpandedNodes) {
    throw new AppError(
      'DESCRIPTION_INVALID',
      `The description's YAML aliases expand to more than ${maxExpandedNodes} nodes; refused as an alias bomb.`,
    );
  }
}
