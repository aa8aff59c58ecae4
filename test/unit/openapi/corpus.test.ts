/**
 * Every real description in the OpenAPI corpus converts, or is refused with the right code, and every
 * schema it produces passes an independent checker. Local files only: no network.
 *
 * Which corpus: `CORPUS_DIR` (a folder with a MANIFEST.tsv) if set, else `../shared/corpus/openapi`
 * beside the checkout if it exists, else the small vendored subset in test/fixtures/openapi, so a
 * plain clone still tests real descriptions. Tests that name files outside the subset run only
 * on the full corpus.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../../src/errors.js';
import { convertDescription, type ConversionResult } from '../../../src/openapi/convert.js';
import { parseDescription } from '../../../src/openapi/load.js';
import { buildRequest } from '../../../src/openapi/request.js';
import { checkInputSchema, newAjv } from './schema-check.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const vendoredDir = resolve(repoRoot, 'test/fixtures/openapi');

function pickCorpus(): { dir: string; full: boolean; label: string } {
  const fromEnv = process.env.CORPUS_DIR;
  if (fromEnv !== undefined && fromEnv !== '') {
    const dir = resolve(fromEnv);
    if (!existsSync(join(dir, 'MANIFEST.tsv'))) throw new Error(`CORPUS_DIR=${dir} has no MANIFEST.tsv`);
    return { dir, full: true, label: `CORPUS_DIR ${dir}` };
  }
  const shared = resolve(repoRoot, '../shared/corpus/openapi');
  if (existsSync(join(shared, 'MANIFEST.tsv')))
    return { dir: shared, full: true, label: `full corpus ${shared}` };
  return { dir: vendoredDir, full: false, label: `vendored subset ${vendoredDir}` };
}

const corpus = pickCorpus();
const corpusDir = corpus.dir;
// The run says which corpus it used (also in the suite's name below).
console.info(`OpenAPI corpus: ${corpus.label}`);

interface ManifestRow {
  file: string;
  operations: number;
}

const manifest: ManifestRow[] = readFileSync(join(corpusDir, 'MANIFEST.tsv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const cells = line.split('\t');
    const count = (i: number) => Number(cells[i]);
    // Columns 7..11: get, post, put, patch, delete.
    return { file: cells[0] as string, operations: count(7) + count(8) + count(9) + count(10) + count(11) };
  });

/** Files the contract refuses, with the code. */
const REFUSED: Record<string, string> = {
  'stripe-spec3-2023-09-indent3-over5MiB.json': 'DESCRIPTION_TOO_LARGE',
};

const results = new Map<string, ConversionResult>();
function converted(file: string): ConversionResult {
  let result = results.get(file);
  if (result === undefined) {
    const { document } = parseDescription(readFileSync(join(corpusDir, file), 'utf8'));
    // As if fetched from an address: Kubernetes has no host, and some descriptions have relative servers.
    result = convertDescription(document, `https://descriptions.example.com/${file}`, null);
    results.set(file, result);
  }
  return result;
}

describe(`the OpenAPI corpus (${corpus.label})`, () => {
  it.runIf(corpus.full)('should list all 29 corpus files in the manifest', () => {
    expect(manifest).toHaveLength(29);
  });

  it.runIf(!corpus.full)('should list every vendored description in the manifest, and only those', () => {
    const files = readdirSync(vendoredDir).filter((f) => /\.(json|ya?ml)$/.test(f));
    expect(manifest.map((row) => row.file).sort()).toEqual(files.sort());
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  it.each(manifest.filter((row) => REFUSED[row.file] !== undefined))(
    'should refuse $file with the right code',
    ({ file }) => {
      const text = readFileSync(join(corpusDir, file), 'utf8');
      let code: string | undefined;
      try {
        parseDescription(text);
      } catch (error) {
        code = isAppError(error) ? error.code : 'not an AppError';
      }
      expect(code).toBe(REFUSED[file]);
    },
  );

  const accepted = manifest.filter((row) => REFUSED[row.file] === undefined);
  const ajv = newAjv();

  it.each(accepted)(
    'should convert $file with every operation converted or skipped',
    ({ file, operations }) => {
      const result = converted(file);
      expect(result.operations.length + result.skipped.length).toBe(operations);
      expect(result.operations.length).toBe(Math.min(operations - countNonLimit(result), 300));
      const names = [...result.operations, ...result.skipped].map((o) => o.name);
      expect(new Set(names).size).toBe(names.length);
    },
  );

  it.each(accepted)('should produce schemas from $file that pass the independent checker', ({ file }) => {
    const result = converted(file);
    const problems: string[] = [];
    for (const op of result.operations) {
      for (const problem of checkInputSchema(ajv, op.inputSchema)) problems.push(`${op.name}: ${problem}`);
      expect(op.description.length).toBeGreaterThan(0);
      expect(op.description.length).toBeLessThanOrEqual(400);
      expect(op.description).not.toMatch(/[\r\n]/);
      expect(op.risk).toBe(op.binding.method === 'GET' ? 'READ' : 'WRITE');
      expect(op.binding.baseUrl).toMatch(/^https?:\/\/[^/]/);
      // Every binding field is a declared property, and every property is bound.
      const properties = Object.keys(op.inputSchema.properties as object);
      expect(op.binding.fields.map((f) => f.name).sort()).toEqual([...properties].sort());
    }
    expect(problems).toEqual([]);
  });

  // swaggerapi-petstore3.yaml is in the vendored subset and the full corpus alike.
  it('should convert the Swagger Petstore 3 addPet to a JSON body and skip the octet-stream upload', () => {
    const op = find('swaggerapi-petstore3.yaml', 'addPet');
    expect(op.binding).toMatchObject({
      method: 'POST',
      path: '/pet',
      bodyEncoding: 'json',
      wholeBody: false,
    });
    // A relative server ("/v3") resolves against the description's address.
    expect(op.binding.baseUrl).toBe('https://descriptions.example.com/v3');
    expect(op.inputSchema.required).toEqual(['name', 'photoUrls']);
    const built = buildRequest(op.binding, { name: 'Rex', photoUrls: ['u'], status: 'available' });
    expect(built).toMatchObject({
      ok: true,
      request: { url: 'https://descriptions.example.com/v3/pet', contentType: 'application/json' },
    });
    if (built.ok)
      expect(JSON.parse(built.request.body ?? '')).toEqual({
        name: 'Rex',
        photoUrls: ['u'],
        status: 'available',
      });
    const { skipped } = converted('swaggerapi-petstore3.yaml');
    expect(skipped.map((s) => [s.name, s.reason])).toEqual([['uploadFile', 'UNSUPPORTED_BODY']]);
  });

  it.runIf(corpus.full)(
    'should accept the 5.16 MB Stripe JSON, which is over 5,000,000 bytes but under 5 MiB',
    () => {
      const bytes = readFileSync(join(corpusDir, 'stripe-spec3-2023-09-indent2-over5MB.json')).length;
      expect(bytes).toBeGreaterThan(5_000_000);
      expect(bytes).toBeLessThanOrEqual(5 * 1024 * 1024);
      expect(converted('stripe-spec3-2023-09-indent2-over5MB.json').operations).toHaveLength(300);
    },
  );

  it.runIf(corpus.full)(
    'should skip Stripe operations past the 300 limit, the deprecated ones and the multipart upload',
    () => {
      const { skipped } = converted('stripe-spec3-2023-09-indent2-over5MB.json');
      const reason = (code: string) => skipped.filter((s) => s.reason === code).map((s) => s.name);
      expect(reason('DEPRECATED')).toHaveLength(4);
      expect(reason('UNSUPPORTED_BODY')).toEqual(['PostFiles']);
      expect(reason('LIMIT')).toHaveLength(468 - 300 - 4 - 1);
    },
  );

  it.runIf(corpus.full)(
    'should convert Stripe PostCustomers to a form body whose metadata nests in brackets',
    () => {
      const op = find('stripe-spec3-2023-09-indent2-over5MB.json', 'PostCustomers');
      expect(op.binding).toMatchObject({
        method: 'POST',
        path: '/v1/customers',
        bodyEncoding: 'form',
        wholeBody: false,
      });
      expect(op.binding.baseUrl).toBe('https://api.stripe.com');
      const metadata = op.binding.fields.find((f) => f.name === 'metadata');
      expect(metadata).toMatchObject({ in: 'body', wireName: 'metadata', style: 'deepObject' });
      const properties = op.inputSchema.properties as Record<string, Record<string, unknown>>;
      // anyOf [object of strings, ""]: the first option is taken.
      expect(properties.metadata).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
      expect(properties.address).toMatchObject({ type: 'object', additionalProperties: false });

      const built = buildRequest(op.binding, {
        email: 'a@example.com',
        metadata: { order_id: '6735', 'note x': 'a&b' },
        expand: ['default_source', 'tax'],
        address: { city: 'Paris' },
      });
      expect(built.ok).toBe(true);
      if (!built.ok) return;
      expect(built.request.contentType).toBe('application/x-www-form-urlencoded');
      const pairs = (built.request.body ?? '').split('&').sort();
      expect(pairs).toEqual(
        [
          'address[city]=Paris',
          'email=a%40example.com',
          'expand[]=default_source',
          'expand[]=tax',
          'metadata[note%20x]=a%26b',
          'metadata[order_id]=6735',
        ].sort(),
      );
    },
  );

  it.runIf(corpus.full)(
    'should keep Stripe GetCustomers query objects as deepObject and send no body',
    () => {
      const op = find('stripe-spec3-2023-09-indent2-over5MB.json', 'GetCustomers');
      expect(op.binding.bodyEncoding).toBeNull();
      const built = buildRequest(op.binding, { created: { gte: 1700000000 }, limit: 3 });
      expect(built).toMatchObject({
        ok: true,
        request: { url: 'https://api.stripe.com/v1/customers?created[gte]=1700000000&limit=3', body: null },
      });
    },
  );

  it.runIf(corpus.full)(
    'should take Kubernetes path-level parameters into every operation of the path',
    () => {
      const op = find('kubernetes-swagger-v1.9.12.json', 'readNamespacedPod');
      expect(op.binding.path).toBe('/api/v1/namespaces/{namespace}/pods/{name}');
      expect(op.binding.fields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'name', in: 'path', required: true }),
          expect.objectContaining({ name: 'namespace', in: 'path', required: true }),
          // `pretty` is declared on the path item, `exact` on the operation.
          expect.objectContaining({ name: 'pretty', in: 'query' }),
          expect.objectContaining({ name: 'exact', in: 'query' }),
        ]),
      );
      expect(op.inputSchema.required).toEqual(['name', 'namespace']);
      // No host in the description: the base comes from the description's address.
      expect(op.binding.baseUrl).toBe('https://descriptions.example.com');
      const replace = find('kubernetes-swagger-v1.9.12.json', 'replaceNamespacedPod');
      expect(replace.binding).toMatchObject({ method: 'PUT', bodyEncoding: 'json', wholeBody: false });
      expect(replace.binding.fields.map((f) => f.name)).toEqual(
        expect.arrayContaining(['name', 'namespace', 'spec']),
      );
    },
  );

  it.runIf(corpus.full)(
    "should say in the diagnostics that Kubernetes' 12 head and 12 options operations were not taken, and why (issue 25, item 7)",
    () => {
      const { diagnostics } = converted('kubernetes-swagger-v1.9.12.json');
      const lines = diagnostics.filter((d) => / operations? (was|were) not taken /.test(d));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe(
        '12 options operations were not taken ("/api/v1/namespaces/{namespace}/pods/{name}/proxy", "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}", "/api/v1/namespaces/{namespace}/services/{name}/proxy" and 9 more): operations are made from get, put, post, patch and delete only, and OPTIONS asks which methods and headers the server allows',
      );
      expect(lines[1]).toMatch(
        /^12 head operations were not taken \(.* and 9 more\): .*HEAD asks for what GET answers/,
      );
    },
  );

  it.runIf(corpus.full)('should convert Slack Swagger 2 formData parameters to form fields', () => {
    const op = find('slack-web-openapi-v2.json', 'chat_postMessage');
    expect(op.binding).toMatchObject({
      method: 'POST',
      path: '/chat.postMessage',
      baseUrl: 'https://slack.com/api',
      bodyEncoding: 'form',
      wholeBody: false,
    });
    expect(op.binding.fields.find((f) => f.name === 'channel')).toEqual({
      name: 'channel',
      in: 'body',
      wireName: 'channel',
      required: true,
    });
    expect(op.binding.fields.find((f) => f.name === 'token')).toMatchObject({ in: 'header' });
    const built = buildRequest(op.binding, {
      token: 'xoxb-1',
      channel: 'C1',
      text: 'hi there',
      mrkdwn: false,
    });
    expect(built).toMatchObject({
      ok: true,
      request: {
        url: 'https://slack.com/api/chat.postMessage',
        headers: { token: 'xoxb-1' },
        body: 'channel=C1&mrkdwn=false&text=hi%20there',
      },
    });
  });

  it.runIf(corpus.full)('should keep the YAML 1.2 strings ON and OFF in the Google enum', () => {
    const { operations } = converted('google-abusiveexperiencereport-v1.yaml');
    const text = JSON.stringify(operations);
    expect(text).not.toContain('"enum":[true');
    const { document } = parseDescription(
      readFileSync(join(corpusDir, 'google-abusiveexperiencereport-v1.yaml'), 'utf8'),
    );
    expect(JSON.stringify(document)).toContain('"ON"');
    expect(JSON.stringify(document)).toContain('"OFF"');
  });

  it.runIf(corpus.full)(
    'should rename OpenAI bracketed parameter names and keep the real name on the wire',
    () => {
      const result = converted('openai-openapi.json');
      const op = result.operations.find((o) => o.binding.fields.some((f) => f.wireName === 'event_types[]'));
      expect(op).toBeDefined();
      const field = op?.binding.fields.find((f) => f.wireName === 'event_types[]');
      expect(field?.name).toBe('event_types');
    },
  );
});

describe('the independent checker', () => {
  const ajv = newAjv();
  const ok = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 6; i++) deep = { type: 'object', properties: { a: deep }, additionalProperties: false };
  const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, { type: 'string' }]));

  it.each([
    ['a schema that does not compile', { ...ok, properties: { a: { type: 'nope' } } }, 'does not compile'],
    ['a root that is not closed', { ...ok, additionalProperties: true }, 'root additionalProperties'],
    [
      'a nested object that is not closed',
      { ...ok, properties: { a: { type: 'object', properties: {} } } },
      'without additionalProperties:false',
    ],
    ['six levels', deep, 'depth 6 > 5'],
    ['65 properties', { ...ok, properties: many }, '65 properties'],
    [
      '201 enum values',
      { ...ok, properties: { a: { enum: Array.from({ length: 201 }, (_, i) => i) } } },
      'enum of 201',
    ],
    ['an invalid name', { ...ok, properties: { 'a b': {} } }, 'invalid name'],
    ['required outside properties', { ...ok, required: ['b'] }, 'required "b" is not a property'],
  ])('should flag %s', (_what, schema, problem) => {
    expect(checkInputSchema(ajv, schema).join('\n')).toContain(problem);
  });

  it('should pass a schema that meets the contract', () => {
    expect(checkInputSchema(ajv, ok)).toEqual([]);
  });
});

function countNonLimit(result: ConversionResult): number {
  return result.skipped.filter((s) => s.reason !== 'LIMIT').length;
}

function find(file: string, name: string) {
  const op = converted(file).operations.find((o) => o.name === name);
  if (op === undefined) throw new Error(`${name} not found in ${file}`);
  return op;
}
