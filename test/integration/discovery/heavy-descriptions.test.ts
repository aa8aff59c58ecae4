/**
 * CPU-heavy descriptions (issue #10, finding 7): parsing and converting run on a worker thread
 * with a time limit, so the service keeps answering while a large description converts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TOTAL_SCHEMA_NODES } from '../../../src/openapi/convert.js';
import { CreateConnectionDocument, CreateWorkspaceDocument } from '../../generated/graphql.js';
import { aliasedDescription } from '../../support/aliased-description.js';
import { Role, startTestApp } from '../../support/app.js';

const PETS = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: 'https://pets.example.com' }],
  paths: { '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } } },
});

/** Just under 5 MiB of YAML that takes the parser seconds. */
function slowYaml(): string {
  const lines = ['openapi: 3.0.3', 'info: { title: Slow, version: "1" }', 'paths: {}', 'x-padding:'];
  for (let i = 0; i < 170_000; i++) lines.push(`  key${i}: [a, b, { c: d }]`);
  return lines.join('\n');
}

async function setUp(env: Record<string, string> = {}) {
  const t = await startTestApp({ env });
  const admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Heavy descriptions' } }, admin);
  const connect = (name: string, descriptionText: string) =>
    t.ok(
      CreateConnectionDocument,
      { input: { workspaceId: ws.createWorkspace.workspace!.id, kind: 'OPENAPI', name, descriptionText } },
      admin,
    );
  return { t, connect };
}

describe('discovering a description whose 300 operations share one schema through YAML aliases', () => {
  let app: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    app = await setUp();
  });
  afterAll(async () => {
    await app.t.stop();
  });

  it("should parse and convert it on the app's workers while /healthz keeps answering", async () => {
    const text = aliasedDescription();
    const healthz = new URL('/healthz', app.t.url);
    const pool = app.t.app.services.descriptions;
    let answeredWhileConverting = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const res = await fetch(healthz);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        if (pool.busy > 0) answeredWhileConverting++;
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const loaded = await pool
      .load({ text }, { fetchText: () => Promise.reject(new Error('not fetched')) }, null)
      .finally(() => {
        done = true;
      });
    await poll;

    expect(loaded.conversion.operations).toHaveLength(300);
    // /healthz was answered while a worker held the job: on the event loop, the parse and
    // conversion would have held every answer until they ended. How long /healthz waits meanwhile
    // is measured by `npm run bench -- descriptions` ("/healthz meanwhile …; loop delay max").
    expect(answeredWhileConverting).toBeGreaterThan(0);
  }, 120_000);

  it('should discover all 300 operations, their schemas within the total budget', async () => {
    const created = await app.connect('Aliased', aliasedDescription());
    const run = created.createConnection.discoveryRun!;
    expect(run).toMatchObject({ outcome: 'SUCCEEDED', errorCode: null, added: 300 });
    expect(run.diagnostics.join('\n')).toMatch(
      new RegExp(`input schemas together were larger than ${DEFAULT_MAX_TOTAL_SCHEMA_NODES} nodes`),
    );
  }, 120_000);
});

describe('a description over the time limit', () => {
  let app: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    // 300 ms, not 1 s: the slow description must not finish in time on a fast, idle machine.
    app = await setUp({ DESCRIPTION_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await app.t.stop();
  });

  it('should be refused with DESCRIPTION_TOO_COMPLEX, and the next description discovered', async () => {
    const refused = await app.connect('Slow', slowYaml());
    expect(refused.createConnection.discoveryRun).toMatchObject({
      outcome: 'FAILED',
      errorCode: 'DESCRIPTION_TOO_COMPLEX',
      added: 0,
    });
    expect(refused.createConnection.discoveryRun!.errorMessage).toMatch(/longer than 300 ms/);

    const next = await app.connect('Pets', PETS);
    expect(next.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 1 });
  }, 120_000);
});
