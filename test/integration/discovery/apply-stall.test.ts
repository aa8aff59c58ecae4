/**
 * Saving hundreds of operations with large schemas (issue #10): discovery's apply step must not
 * hold the event loop. It once took seconds (the ORM inlined megabytes of JSON into SQL text and
 * snapshotted every entity); `/healthz` and everything else waited meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
} from '../../generated/graphql.js';
import { aliasedDescription } from '../../support/aliased-description.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startLargeToolsServer } from '../../support/large-tools-server.js';

let t: TestApp;
let admin: string;
let workspaceId: string;
let server: Awaited<ReturnType<typeof startLargeToolsServer>>;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Apply stall' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  server = await startLargeToolsServer();
  // Start the description worker first, as a running service would have.
  await t.app.services.descriptions.convert({
    text: '{"openapi":"3.0.3","paths":{}}',
    descriptionUrl: null,
    baseUrl: null,
  });
});

afterAll(async () => {
  await t?.stop();
  await server?.close();
});

/** Runs `work` while probing /healthz; returns its result and the statuses seen meanwhile. */
async function watched<T>(work: () => Promise<T>) {
  const healthz = new URL('/healthz', t.url);
  const statuses: number[] = [];
  let done = false;
  const probe = (async () => {
    while (!done) {
      const res = await fetch(healthz);
      await res.arrayBuffer();
      statuses.push(res.status);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work(), statuses };
  } finally {
    done = true;
    await probe;
  }
}

/**
 * /healthz answered, and answered 200, while the discovery ran. How long it waited (the stall this
 * file was written for: 0.6–3.5 s before the fix) is measured by `npm run bench -- descriptions`
 * ("/healthz meanwhile …; loop delay max", against idle, for the aliased description and for these
 * 300 large MCP tools) and by `npm run bench -- abuse` (row 7).
 */
function expectResponsive(seen: { statuses: number[] }) {
  expect(seen.statuses.length).toBeGreaterThan(0);
  expect(new Set(seen.statuses)).toEqual(new Set([200]));
}

describe('discovery saving 300 operations with large schemas', () => {
  it('should add the aliased description’s 300 operations while /healthz keeps answering', async () => {
    const seen = await watched(() =>
      t.ok(
        CreateConnectionDocument,
        {
          input: {
            workspaceId,
            kind: 'OPENAPI',
            name: 'Aliased',
            descriptionText: aliasedDescription(),
          },
        },
        admin,
      ),
    );
    expect(seen.result.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 300 });
    expectResponsive(seen);
  }, 180_000);

  it('should add 300 MCP tools, then hold all 300 for review when each gains an argument, while /healthz keeps answering', async () => {
    server.setVersion(1);
    const first = await watched(() =>
      t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Many tools', endpointUrl: server.url } },
        admin,
      ),
    );
    expect(first.result.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 300 });
    expectResponsive(first);
    const connectionId = first.result.createConnection.connection!.id;

    server.setVersion(2);
    const second = await watched(() => t.ok(DiscoverDocument, { input: { connectionId } }, admin));
    expect(second.result.discover.run).toMatchObject({
      outcome: 'SUCCEEDED',
      added: 0,
      removed: 0,
      updated: 300,
      flagged: 300,
    });
    expect(second.result.discover.changedOperations).toHaveLength(300);
    expectResponsive(second);

    // What was written, read straight from the database.
    const rows = await t.app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ held: string; described: string; extended: string; reasons: string }[]>(
        `select count(*) filter (where not o.enabled and o.needs_review) as held,
                count(*) filter (where o.description like '%second version') as described,
                count(*) filter (where jsonb_exists(o.input_schema->'properties', 'added_later')) as extended,
                (select count(*) from review_reason r join operation p on p.id = r.operation_id
                  where p.connection_id = ? and r.code = 'ARGUMENTS_ADDED' and r.detail = 'added_later'
                    and r.resolved_at is null) as reasons
           from operation o where o.connection_id = ?`,
        [rawId(connectionId), rawId(connectionId)],
      );
    expect(rows[0]).toEqual({ held: '300', described: '300', extended: '300', reasons: '300' });
  }, 180_000);
});
