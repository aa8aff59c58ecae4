/**
 * The input schema of every operation of every vendored OpenAPI description
 * (test/fixtures/openapi), as this service converts them: real-world schemas for tests that judge
 * or compile schemas one by one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertDescription } from '../../src/openapi/convert.js';
import { parseDescription } from '../../src/openapi/load.js';
import type { JsonObject } from '../../src/operations/types.js';
import { PROJECT_ROOT } from '../../src/project-root.js';

export function vendoredInputSchemas(): JsonObject[] {
  const dir = join(PROJECT_ROOT, 'test', 'fixtures', 'openapi');
  const out: JsonObject[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.(json|ya?ml)$/.test(f))) {
    const { document } = parseDescription(readFileSync(join(dir, file), 'utf8'), { maxBytes: 64 << 20 });
    for (const op of convertDescription(document, `https://descriptions.example.com/${file}`, null)
      .operations)
      out.push(op.inputSchema);
  }
  return out;
}
