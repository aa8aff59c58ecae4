/**
 * The GENERIC rules hold for today's output (issue 26: "GENERIC output is unchanged" and "0 rule
 * violations"): the tool list `declareTools` builds from every vendored OpenAPI description passes
 * `checkDeclarationList('GENERIC', …)` as it is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertDescription } from '../../../src/openapi/convert.js';
import { parseDescription } from '../../../src/openapi/load.js';
import { PROJECT_ROOT } from '../../../src/project-root.js';
import { declareTools } from '../../../src/turns/declare.js';
import { checkDeclarationList } from '../../../src/turns/dialects/rules.js';

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'openapi');
const files = readdirSync(FIXTURES).filter((f) => /\.(json|ya?ml)$/.test(f));

describe('GENERIC on the vendored descriptions', () => {
  it.each(files)("today's declared tools for %s break no GENERIC rule", (file) => {
    const { document } = parseDescription(readFileSync(join(FIXTURES, file), 'utf8'));
    const { operations } = convertDescription(document, `https://descriptions.example.com/${file}`, null);
    expect(operations.length).toBeGreaterThan(0);
    const { tools } = declareTools({
      builtIns: [],
      operations: operations.map((op, i) => ({
        operationId: `op-${i}`,
        connectionSlug: 'fixture',
        name: op.name,
        description: op.description,
        inputSchema: op.inputSchema,
      })),
    });
    expect(checkDeclarationList('GENERIC', tools)).toEqual([]);
  });
});
