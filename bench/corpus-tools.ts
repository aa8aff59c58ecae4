/**
 * Corpus-like tools for the dialect benches (issue 26): the operations of Stripe's description as
 * this service converts them (`../shared/corpus/openapi`, when it is there), else of every vendored
 * fixture in test/fixtures/openapi, as MCP tools `{ name, description, inputSchema }`. Each stays
 * under the 64 KiB a listed tool may take, so discovery keeps every one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_TOOL_DEFINITION_BYTES } from '../src/mcp/tool-mapping.js';
import { convertDescription } from '../src/openapi/convert.js';
import { parseDescription } from '../src/openapi/load.js';
import type { JsonObject } from '../src/operations/types.js';
import { root } from './support.js';

export interface CorpusTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/** The shared corpus beside the checkout (a worktree sits one level deeper than the main one). */
const STRIPE =
  [join(root, '..'), join(root, '..', '..')]
    .map((dir) => join(dir, 'shared', 'corpus', 'openapi', 'stripe-spec3-2023-09.yaml'))
    .find((f) => existsSync(f)) ?? '';
const FIXTURES = join(root, 'test', 'fixtures', 'openapi');

function toolsOf(file: string): CorpusTool[] {
  const { document } = parseDescription(readFileSync(file, 'utf8'), { maxBytes: 64 * 1024 * 1024 });
  return convertDescription(document, `https://descriptions.example.com/${file}`, null).operations.map(
    (op) => ({
      name: op.name,
      description: op.description ?? '',
      inputSchema: op.inputSchema,
    }),
  );
}

/** Up to `count` tools, and where they came from. */
export function corpusTools(count: number): { source: string; tools: CorpusTool[] } {
  const files =
    STRIPE !== ''
      ? [STRIPE]
      : readdirSync(FIXTURES)
          .filter((f) => /\.(json|ya?ml)$/.test(f))
          .sort()
          .map((f) => join(FIXTURES, f));
  const tools: CorpusTool[] = [];
  const names = new Set<string>();
  for (const file of files) {
    let listed: CorpusTool[];
    try {
      listed = toolsOf(file);
    } catch {
      continue; // refused by the contract (the OpenAPI corpus test says why)
    }
    for (const t of listed) {
      if (tools.length === count) break;
      if (Buffer.byteLength(JSON.stringify(t)) >= MAX_TOOL_DEFINITION_BYTES) continue;
      let name = t.name;
      for (let i = 2; names.has(name); i++) name = `${t.name}_${i}`;
      names.add(name);
      tools.push({ ...t, name });
    }
  }
  return {
    source: existsSync(STRIPE)
      ? 'Stripe (../shared/corpus)'
      : `the vendored fixtures (${files.length} files)`,
    tools,
  };
}
