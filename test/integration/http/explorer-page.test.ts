/**
 * GraphiQL at GET /graphql: a static page for a browser, answered before the token check, every
 * asset local; a GET that names a query still meets the token check and CSRF prevention; and
 * GRAPHIQL=off serves none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
let t: TestApp;
let off: TestApp;

beforeAll(async () => {
  [t, off] = await Promise.all([startTestApp(), startTestApp({ env: { GRAPHIQL: 'off' } })]);
});

afterAll(async () => {
  await Promise.all([t?.stop(), off?.stop()]);
});

describe('GET /graphql from a browser', () => {
  it('should answer the explorer page without a token, under a CSP with no inline script', async () => {
    const res = await fetch(t.url, { headers: { accept: BROWSER } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('<title>GraphQL explorer</title>');
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(6);
    for (const ref of refs) expect(ref === 'data:,' || ref.startsWith('/graphiql/')).toBe(true);
    expect(html).not.toMatch(/<script>|<style>|\son\w+=/);
    for (const ref of refs.filter((r) => r.startsWith('/'))) {
      const asset = await fetch(new URL(ref, t.url));
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-security-policy')).toBe(csp);
      await asset.arrayBuffer();
    }
  });

  it('should answer HEAD like GET, and refuse other methods on the assets', async () => {
    const head = await fetch(t.url, { method: 'HEAD', headers: { accept: 'text/html' } });
    expect(head.status).toBe(200);
    const post = await fetch(new URL('/graphiql/explorer.js', t.url), { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
  });

  it('should leave a GET that names a query to the token check', async () => {
    const url = `${t.url}?query=${encodeURIComponent('{ viewer { role } }')}`;
    const res = await fetch(url, { headers: { accept: BROWSER } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('should keep CSRF prevention for a GET query that carries a token', async () => {
    const token = await t.token(Role.ADMIN);
    const url = `${t.url}?query=${encodeURIComponent('{ viewer { role } }')}`;
    const refused = await fetch(url, { headers: { accept: BROWSER, authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/apollo-require-preflight/);
    const ok = await fetch(url, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { viewer: { role: 'ADMIN' } } });
  });

  it('should answer a GraphQL client without a token 401 as before', async () => {
    const res = await fetch(t.url, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('should serve nothing of it with GRAPHIQL=off', async () => {
    const page = await fetch(off.url, { headers: { accept: BROWSER } });
    expect(page.status).toBe(401);
    expect(await page.text()).not.toContain('explorer');
    const asset = await fetch(new URL('/graphiql/graphiql.js', off.url));
    expect(asset.status).toBe(404);
    const debuggerPage = await fetch(new URL('/debugger', off.url));
    expect(debuggerPage.status).toBe(200);
  });
});
