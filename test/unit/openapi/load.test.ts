import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../../../src/errors.js';
import {
  DEFAULT_MAX_DESCRIPTION_BYTES,
  loadDescription,
  type LoadDeps,
  parseDescription,
} from '../../../src/openapi/load.js';

const noFetch: LoadDeps = {
  fetchText: () => Promise.reject(new Error('no fetch expected')),
};

const minimalJson = '{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}';

async function failure(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('loadDescription', () => {
  it.each([
    ['JSON', minimalJson, 'json', 'openapi-3.0'],
    ['JSON with a byte order mark', `\uFEFF${minimalJson}`, 'json', 'openapi-3.0'],
    ['YAML', 'openapi: 3.1.0\ninfo: {title: t, version: "1"}\npaths: {}\n', 'yaml', 'openapi-3.1'],
    ['YAML flow style', '{openapi: 3.0.0, paths: {}}', 'yaml', 'openapi-3.0'],
    ['Swagger 2 YAML', 'swagger: "2.0"\ninfo: {title: t}\npaths: {}\n', 'yaml', 'swagger-2.0'],
    ['Swagger 2 YAML with an unquoted version', 'swagger: 2.0\npaths: {}\n', 'yaml', 'swagger-2.0'],
  ])('should parse %s given as text', async (_what, text, format, version) => {
    const loaded = await loadDescription({ text }, noFetch);
    expect(loaded).toMatchObject({ format, version, url: null });
    expect(loaded.bytes).toBe(Buffer.byteLength(text));
  });

  it('should read YAML as YAML 1.2: ON, OFF, yes and no stay strings', async () => {
    const { document } = await loadDescription(
      { text: 'openapi: 3.0.0\npaths: {}\nx-values: [ON, OFF, yes, no, On, true, 012, 0o12, 1e3]\n' },
      noFetch,
    );
    expect(document['x-values']).toEqual(['ON', 'OFF', 'yes', 'no', 'On', true, 12, 10, 1000]);
  });

  it('should fetch an address through the injected client with the 5 MiB cap', async () => {
    const fetchText = vi.fn((_url: string, _max: number) => Promise.resolve(minimalJson));
    const loaded = await loadDescription({ url: 'https://api.example.com/openapi.json' }, { fetchText });
    expect(fetchText).toHaveBeenCalledWith('https://api.example.com/openapi.json', 5_242_880);
    expect(loaded).toMatchObject({ url: 'https://api.example.com/openapi.json', version: 'openapi-3.0' });
  });

  it("should pass the fetcher's DESCRIPTION_TOO_LARGE through", async () => {
    const tooLarge = new AppError('DESCRIPTION_TOO_LARGE', 'over the cap');
    const error = await failure(() =>
      loadDescription({ url: 'https://x.example.com/a.json' }, { fetchText: () => Promise.reject(tooLarge) }),
    );
    expect(error).toBe(tooLarge);
  });

  it('should wrap a foreign fetch error as DESCRIPTION_FETCH_FAILED, keeping the cause', async () => {
    const cause = new TypeError('fetch failed');
    const error = await failure(() =>
      loadDescription({ url: 'https://x.example.com/a.json' }, { fetchText: () => Promise.reject(cause) }),
    );
    expect(error.code).toBe('DESCRIPTION_FETCH_FAILED');
    expect(error.message).toContain('https://x.example.com/a.json');
    expect(error.cause).toBe(cause);
  });

  it('should refuse fetched text over the cap even when the fetcher did not', async () => {
    const big = `${minimalJson}${' '.repeat(DEFAULT_MAX_DESCRIPTION_BYTES)}`;
    const error = await failure(() =>
      loadDescription({ url: 'https://x.example.com/a.json' }, { fetchText: () => Promise.resolve(big) }),
    );
    expect(error.code).toBe('DESCRIPTION_TOO_LARGE');
  });

  it('should accept exactly 5 MiB and refuse one byte more, counting UTF-8 bytes', async () => {
    const exact = minimalJson.padEnd(DEFAULT_MAX_DESCRIPTION_BYTES, ' ');
    expect((await loadDescription({ text: exact }, noFetch)).bytes).toBe(5_242_880);
    expect((await failure(() => loadDescription({ text: `${exact} ` }, noFetch))).code).toBe(
      'DESCRIPTION_TOO_LARGE',
    );
    // Fewer characters than the cap, more bytes: "é" is two bytes.
    const multiByte = `${minimalJson.slice(0, -1)},"x-pad":"${'é'.repeat(DEFAULT_MAX_DESCRIPTION_BYTES / 2)}"}`;
    expect(multiByte.length).toBeLessThan(DEFAULT_MAX_DESCRIPTION_BYTES);
    const error = await failure(() => loadDescription({ text: multiByte }, noFetch));
    expect(error.code).toBe('DESCRIPTION_TOO_LARGE');
    expect(error.message).toContain('5242880');
  });

  it.each([
    ['empty text', '   \n', 'empty'],
    ['broken YAML', 'openapi: 3.0.0\npaths: {\n', 'neither valid JSON nor valid YAML'],
    ['broken JSON', '{"openapi": "3.0.0",', 'neither valid JSON nor valid YAML'],
    ['duplicate YAML keys', 'openapi: 3.0.0\nopenapi: 3.1.0\n', 'neither valid JSON nor valid YAML'],
    ['an unknown version', 'openapi: 3.2.0\npaths: {}\n', '"openapi": "3.2.0"'],
    ['a YAML list', '- openapi: 3.0.0\n', 'found an array'],
    ['a YAML scalar', 'just some text', 'found a string'],
    ['a JSON number', '42', 'found a number'],
    ['no version field', 'info: {title: t}\npaths: {}\n', 'no "openapi" or "swagger" field'],
  ])('should refuse %s with DESCRIPTION_INVALID', async (_what, text, message) => {
    const error = await failure(() => loadDescription({ text }, noFetch));
    expect(error.code).toBe('DESCRIPTION_INVALID');
    expect(error.message).toContain(message);
  });
});

describe('parseDescription', () => {
  it('should give the same document for the JSON and YAML forms of a description', () => {
    const yaml =
      'openapi: 3.0.0\ninfo:\n  title: t\n  version: "1"\npaths:\n  /a:\n    get:\n      operationId: a\n';
    const json = JSON.stringify({
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: { '/a': { get: { operationId: 'a' } } },
    });
    expect(parseDescription(yaml).document).toEqual(parseDescription(json).document);
  });
});
