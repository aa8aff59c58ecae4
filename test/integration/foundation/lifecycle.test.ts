import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  ViewerDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

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
  /** The slow tool answers only when released; `atTool` resolves once a call reached it. */
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached: () => void = () => undefined;
  const atTool = new Promise<void>((resolve) => {
    reached = resolve;
  });
  beforeAll(async () => {
    peer = await startSdkServer({
      stateful: false,
      json: true,
      tools: [
        {
          name: 'slow',
          annotations: { readOnlyHint: true },
          handler: async () => {
            reached();
            await gate;
            return { content: [{ type: 'text', text: 'finished' }] };
          },
        },
      ],
    });
  });
  afterAll(async () => {
    release();
    await peer.close();
  });

  it('should let a request in flight finish, then refuse new ones', async () => {
    const t = await startTestApp();
    const w = await buildWorld(t, peer.url, 'Drain');
    await connectTools(t, w);
    const turn = await begin(t, w);
    const inFlight = call(t, w, turn.turnId, 'drain__slow');
    await atTool;
    const stopped = t.stop();
    // The tool answers only once the service is draining (healthz 503) or no longer listening.
    await waitUntil(() =>
      fetch(new URL('/healthz', t.url)).then(
        async (res) => {
          await res.arrayBuffer();
          return res.status === 503;
        },
        () => true,
      ),
    );
    release();
    expect(await inFlight).toMatchObject({
      ok: true,
      status: 'SUCCEEDED',
      content: [{ type: 'text', text: 'finished' }],
    });
    await stopped;
    await expect(fetch(t.url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
