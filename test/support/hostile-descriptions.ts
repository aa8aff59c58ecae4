/**
 * Hostile descriptions shared by the tests that show they are refused or bounded
 * (`test/unit/openapi/hostile.test.ts`) and the bench that times them (`bench/openapi.bench.ts`).
 */

/** A billion-laughs alias bomb: nine levels of ten aliases each, 10^10 strings once expanded. */
export function aliasBombYaml(): string {
  let yaml =
    'openapi: 3.0.0\npaths: {}\nx-a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1; i <= 9; i++)
    yaml += `x-a${i}: &a${i} [${Array(10)
      .fill(`*a${i - 1}`)
      .join(',')}]\n`;
  return yaml;
}

/** A description of one operation, `POST /x`, whose JSON body is `schema`. */
export function withBody(schema: unknown, schemas: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      '/x': { post: { operationId: 'x', requestBody: { content: { 'application/json': { schema } } } } },
    },
    components: { schemas },
  };
}

/** One operation whose body is a schema of 64 properties that each refer back to it (64^5 nodes unbounded). */
export function wideSelfReference(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 64; i++) properties[`p${i}`] = { $ref: '#/components/schemas/Wide' };
  return withBody({ $ref: '#/components/schemas/Wide' }, { Wide: { type: 'object', properties } });
}
