/** Errors that say what to do (issue 12, finding 9): each names the field, setting or header to fix. */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateConnectionDocument, CreateWorkspaceDocument } from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { CRM_TOOLS } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;
let pages: Server;
let pagesUrl: string;
let operator: string;
let workspaceId: string;

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  pages = createServer((req, res) => {
    if (req.url !== '/docs') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!DOCTYPE html>\n<html><head><title>API docs</title></head><body>Swagger UI</body></html>');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', () => r()));
  pagesUrl = `http://127.0.0.1:${(pages.address() as { port: number }).port}/docs`;
  operator = await t.token(Role.OPERATOR);
  const admin = await t.token(Role.ADMIN);
  workspaceId = (await t.ok(CreateWorkspaceDocument, { input: { name: 'errors' } }, admin)).createWorkspace
    .workspace!.id;
});

afterAll(async () => {
  await t.stop();
  await peer.close();
  pages.close();
});

async function connect(input: Record<string, unknown>) {
  return (
    await t.ok(
      CreateConnectionDocument,
      { input: { workspaceId, name: `c${Math.random().toString(36).slice(2, 8)}`, ...input } as never },
      operator,
    )
  ).createConnection;
}

describe('errors that say what to do', () => {
  it('should say an MCP address with the wrong path has no MCP endpoint, naming endpointUrl', async () => {
    const wrong = new URL('/not-mcp', pagesUrl).toString();
    const res = await connect({ kind: 'MCP', endpointUrl: wrong });
    expect(res.discoveryRun?.outcome).toBe('FAILED');
    expect(res.discoveryRun?.errorMessage).toMatch(
      /HTTP 404, so there is no MCP endpoint at this address; check the path of endpointUrl/,
    );
  });

  it('should name OUTBOUND_ALLOW_HOSTS for a private address', async () => {
    const res = await connect({ kind: 'MCP', endpointUrl: 'https://10.1.2.3/mcp' });
    const text = JSON.stringify(res);
    expect(text).toContain('OUTBOUND_ALLOW_HOSTS');
    expect(res.userErrors[0]).toMatchObject({ field: ['input', 'endpointUrl'], code: 'URL_REFUSED' });
  });

  it('should say an HTML page is not an OpenAPI description, naming descriptionUrl', async () => {
    const res = await connect({ kind: 'OPENAPI', descriptionUrl: pagesUrl });
    expect(res.discoveryRun?.outcome).toBe('FAILED');
    expect(res.discoveryRun?.errorMessage).toMatch(
      /an HTML page, not an OpenAPI description: point descriptionUrl/,
    );
  });

  it('should name baseUrl, the API field, in its messages', async () => {
    const res = await connect({
      kind: 'OPENAPI',
      descriptionText: JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {} }),
      baseUrl: 'http://api.example.com',
    });
    const text = JSON.stringify(res);
    expect(text).toContain('baseUrl');
    expect(text).not.toContain('base_url');
  });

  it('should tell a GET query without the preflight header which header to send', async () => {
    const res = await fetch(`${t.url}?query=${encodeURIComponent('{ viewer { role } }')}`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toMatch(/need the header "apollo-require-preflight: true"/);
    const ok = await fetch(`${t.url}?query=${encodeURIComponent('{ viewer { role } }')}`, {
      headers: { authorization: `Bearer ${operator}`, 'apollo-require-preflight': 'true' },
    });
    expect(await ok.json()).toEqual({ data: { viewer: { role: 'OPERATOR' } } });
  });
});
