import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { convertDescription } from '../../../src/openapi/convert.js';
import { parseDescription } from '../../../src/openapi/load.js';
import { DescriptionPool } from '../../../src/openapi/pool.js';
import { turnsWhile } from '../../support/wait.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '../../fixtures/openapi', name), 'utf8');

/** YAML that takes the parser seconds; at the default size just under 5 MiB, far past a one-second limit. */
function slowYaml(entries = 170_000): string {
  const lines = ['openapi: 3.0.3', 'info: { title: Slow, version: "1" }', 'paths: {}', 'x-padding:'];
  for (let i = 0; i < entries; i++) lines.push(`  key${i}: [a, b, { c: d }]`);
  return lines.join('\n');
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

const pools: DescriptionPool[] = [];
function pool(options: ConstructorParameters<typeof DescriptionPool>[0]): DescriptionPool {
  const p = new DescriptionPool(options);
  pools.push(p);
  return p;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('DescriptionPool', () => {
  it('should convert on a worker exactly as on this thread', async () => {
    const text = fixture('oai-petstore-v3.0.yaml');
    const url = 'https://descriptions.example.com/petstore.yaml';
    const result = await pool({}).convert({ text, descriptionUrl: url, baseUrl: null });
    expect(result.format).toBe('yaml');
    expect(result.bytes).toBe(Buffer.byteLength(text));
    expect(result.conversion).toEqual(convertDescription(parseDescription(text).document, url, null));
    expect(result.conversion.operations.length).toBeGreaterThan(0);
  });

  it("should pass the parser's and the converter's error codes through", async () => {
    const p = pool({});
    const invalid = await failure(p.convert({ text: 'a: [1, 2', descriptionUrl: null, baseUrl: null }));
    expect(invalid.code).toBe('DESCRIPTION_INVALID');
    expect(invalid.message).toMatch(/neither valid JSON nor valid YAML/);
    const noBase = await failure(
      p.convert({
        text: JSON.stringify({ openapi: '3.0.3', paths: { '/x': { get: {} } } }),
        descriptionUrl: null,
        baseUrl: null,
      }),
    );
    expect(noBase.code).toBe('BASE_URL_MISSING');
  });

  it('should refuse a conversion over the time limit, stop its worker, and convert the next one', async () => {
    const p = pool({ size: 1, timeoutMs: 300 });
    const refused = await failure(p.convert({ text: slowYaml(), descriptionUrl: null, baseUrl: null }));
    expect(refused.code).toBe('DESCRIPTION_TOO_COMPLEX');
    expect(refused.message).toMatch(/longer than 300 ms/);
    expect(p.workers).toBe(0);

    const text = fixture('oai-petstore-v3.0.yaml');
    const next = await p.convert({ text, descriptionUrl: 'https://x.example.com/a.yaml', baseUrl: null });
    expect(next.conversion.operations.map((o) => o.name)).toContain('listPets');
    expect(p.workers).toBe(1);
  }, 60_000);

  it('should keep the event loop free while a description takes seconds to parse', async () => {
    const p = pool({ size: 1, timeoutMs: 60_000 });
    await p.convert({
      text: fixture('oai-petstore-v3.0.yaml'),
      descriptionUrl: 'https://x.example.com/',
      baseUrl: null,
    });
    const { result, turns } = await turnsWhile(
      () => p.busy > 0,
      () => p.convert({ text: slowYaml(60_000), descriptionUrl: 'https://x.example.com/', baseUrl: null }),
    );
    expect(result.conversion.operations).toEqual([]);
    // The loop kept turning while the worker parsed: on this thread, the parse would have held it
    // throughout. How long /healthz waits meanwhile: `npm run bench -- descriptions` ("loop delay max").
    expect(turns).toBeGreaterThan(0);
    expect(p.busy).toBe(0);
  }, 60_000);

  it('should queue jobs beyond its size and run them in turn', async () => {
    const p = pool({ size: 1 });
    const text = fixture('oai-petstore-v3.0.yaml');
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        p.convert({ text, descriptionUrl: `https://x${i}.example.com/a.yaml`, baseUrl: null }),
      ),
    );
    expect(results.map((r) => r.conversion.operations[0]?.binding.baseUrl)).toEqual([
      'http://petstore.swagger.io/v1',
      'http://petstore.swagger.io/v1',
      'http://petstore.swagger.io/v1',
    ]);
    expect(p.workers).toBe(1);
  });

  it('should fail queued and running jobs when closed, and refuse new ones', async () => {
    const p = pool({ size: 1, timeoutMs: 60_000 });
    const running = failure(p.convert({ text: slowYaml(), descriptionUrl: null, baseUrl: null }));
    const queued = failure(p.convert({ text: 'openapi: 3.0.3', descriptionUrl: null, baseUrl: null }));
    await p.close();
    expect((await running).code).toBe('DESCRIPTION_POOL_CLOSED');
    expect((await queued).code).toBe('DESCRIPTION_POOL_CLOSED');
    expect((await failure(p.convert({ text: '{}', descriptionUrl: null, baseUrl: null }))).code).toBe(
      'DESCRIPTION_POOL_CLOSED',
    );
  });
});
