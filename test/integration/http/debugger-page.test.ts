/**
 * The debugger page is served by the service itself: public, offline (every asset local), with
 * correct content types, a strict Content-Security-Policy, and no way to reach another file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';

let t: TestApp;
let origin: string;

beforeAll(async () => {
  t = await startTestApp();
  origin = new URL(t.url).origin;
});

afterAll(async () => {
  await t.stop();
});

describe('GET /debugger', () => {
  it.each([
    ['/debugger', 'text/html; charset=utf-8', '<title>Turn debugger</title>'],
    ['/debugger/app.js', 'text/javascript; charset=utf-8', 'turnEvents'],
    ['/debugger/app.css', 'text/css; charset=utf-8', '.call'],
    ['/debugger/graphql-ws.js', 'text/javascript; charset=utf-8', 'createClient'],
  ])('should serve %s without a token, as %s, under a strict CSP', async (path, type, marker) => {
    const res = await fetch(`${origin}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain(marker);
  });

  it('should load nothing from another origin (works offline)', async () => {
    const html = await (await fetch(`${origin}/debugger`)).text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs)
      expect(ref === 'data:,' || ref === '/graphql' || ref.startsWith('/debugger/')).toBe(true);
    expect(html).not.toMatch(/<script>|<style>|\son\w+=/);
  });

  it.each([
    '/debugger/../package.json',
    '/debugger/%2e%2e/package.json',
    '/debugger/..%2fpackage.json',
    '/debugger/index.html',
    '/debugger/app.js/../../src/config.ts',
    '/web/debugger/app.js',
  ])('should answer 404 for %s', async (path) => {
    const res = await fetch(`${origin}${path}`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('readFileSync');
  });

  it('should refuse other methods', async () => {
    const res = await fetch(`${origin}/debugger`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
  });
});
