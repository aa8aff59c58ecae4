import { readFileSync } from 'node:fs';
import { convertDescription } from './src/openapi/convert.js';
import { parseDescription } from './src/openapi/load.js';
import { compileSchema } from './src/turns/dialects/compile.js';
import { wrapDeclaration } from './src/turns/dialects/declarations.js';
import { checkDeclaration } from './src/turns/dialects/rules.js';
const f = '/work/shared/corpus/openapi/stripe-spec3-2023-09-indent2-over5MB.json';
const r = convertDescription(parseDescription(readFileSync(f, 'utf8')).document, `https://x.example.com/s`, null);
console.log('ops', r.operations.length, 'schema chars', JSON.stringify(r.operations.map(o=>o.inputSchema)).length);
for (let rep = 0; rep < 3; rep++) for (const d of ['OPENAI', 'OPENAI_STRICT', 'ANTHROPIC', 'GEMINI', 'GEMINI_JSON_SCHEMA'] as const) {
  let c1 = 0, c2 = 0, bad = 0;
  for (const op of r.operations) {
    const t0 = performance.now();
    const c = compileSchema(d, op.inputSchema as any);
    const t1 = performance.now();
    if (c.ok) bad += checkDeclaration(d, wrapDeclaration(d, { name: 'a', description: 'd' }, c.schema)).length;
    c1 += t1 - t0; c2 += performance.now() - t1;
  }
  console.log(d, 'compile', c1.toFixed(1), 'check', c2.toFixed(1), 'violations', bad);
}
