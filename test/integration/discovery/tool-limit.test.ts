import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateConnectionDocument, CreateWorkspaceDocument } from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';

let t: TestApp;
let peer: SdkServerHandle;

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({
    stateful: false,
    json: true,
    pageSize: 150,
    tools: Array.from({ length: 450 }, (_, i) => ({
      name: `tool_${i}`,
      annotations: { readOnlyHint: true },
    })),
  });
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('tools beyond the 300 limit (issue 14, item 6)', () => {
  it("should list tools past the limit in the run's skipped list, including pages never read", async () => {
    const admin = await t.token(Role.ADMIN);
    const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Many tools' } }, admin);
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId: ws.createWorkspace.workspace!.id,
          kind: 'MCP',
          name: 'Many',
          endpointUrl: peer.url,
        },
      },
      admin,
    );
    const run = created.createConnection.discoveryRun!;
    expect(run).toMatchObject({ outcome: 'SUCCEEDED', added: 300 });
    // Two pages of 150 filled the limit; the third page was never read.
    expect(run.skipped).toEqual([
      {
        name: '#300 and later',
        reason: 'TOOL_LIMIT',
        detail: 'the connection already has 300 tools; the server listed more on pages that were not read',
      },
    ]);
    expect(run.diagnostics.join('\n')).toMatch(/limit of 300 tools/);
  });
});
