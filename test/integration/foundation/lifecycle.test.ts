import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  ViewerDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, sleep } from '../../support/turns.js';

describe('logs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ captureLogs: true });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('should write one JSON line per request, and never a token or a credential', async () => {
    const admin = await t.token(Role.ADMIN);
    t.logs.length = 0;
    await t.ok(ViewerDocument, {}, admin);
    const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Logged' } }, admin);
    const key = 'sk_log_test_0123456789_SECRET';
    await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId: ws.createWorkspace.workspace!.id,
          kind: 'MCP',
          name: 'Logged tools',
          endpointUrl: 'http://127.0.0.1:9/mcp',
          credential: { kind: 'BEARER', key },
        },
      },
      admin,
    );
    const lines = t.logs
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r).toMatchObject({ method: 'POST', path: '/graphql', status: 200 });
      expect(typeof r.ms).toBe('number');
    }
    const text = t.logs.join('');
    expect(text).not.toContain(admin);
    expect(text).not.toContain(key);
  });
});

describe('graceful shutdown', () => {
  let peer: SdkServerHandle;
  beforeAll(async () => {
    peer = await startSdkServer({
      stateful: false,
      json: true,
      tools: [
        {
          name: 'slow',
          annotations: { readOnlyHint: true },
          handler: async () => {
            await sleep(600);
            return { content: [{ type: 'text', text: 'finished' }] };
          },
        },
      ],
    });
  });
  afterAll(async () => {
    await peer.close();
  });

  it('should let a request in flight finish, then refuse new ones', async () => {
    const t = await startTestApp();
    const w = await buildWorld(t, peer.url, 'Drain');
    await connectTools(t, w);
    const turn = await begin(t, w);
    const inFlight = call(t, w, turn.turnId, 'drain__slow');
    await sleep(150);
    const stopped = t.stop();
    expect(await inFlight).toMatchObject({
      ok: true,
      status: 'SUCCEEDED',
      content: [{ type: 'text', text: 'finished' }],
    });
    await stopped;
    await expect(fetch(t.url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
