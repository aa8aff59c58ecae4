/**
 * The fetch adapter that oauth4webapi uses: OAuth requests go through the outbound client, with its
 * address checks and caps, and redirects are not followed.
 */
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { OutboundError } from '../../../src/http/outbound.js';
import { outboundFetch } from '../../../src/oauth/fetch.js';
import { startRawServer, sendJson, type RawServerHandle } from '../../support/mcp-servers.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { outboundClient } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

const client = (allowLoopback: boolean) => outboundClient(cleanups, { allowLoopback });

async function server(handler: Parameters<typeof startRawServer>[0]): Promise<RawServerHandle> {
  const s = await startRawServer(handler);
  cleanups.push(() => s.close());
  return s;
}

describe('outboundFetch', () => {
  it('should send a form body and hand back status, headers and body as a Response', async () => {
    let seen: { method: string; type: string | undefined; length: string | undefined } | null = null;
    const s = await server((req, res, raw) => {
      seen = {
        method: req.httpMethod,
        type: raw.headers['content-type'],
        length: raw.headers['content-length'],
      };
      sendJson(res, 400, { error: 'invalid_grant' }, { 'www-authenticate': 'Bearer error="x"' });
    });
    const fetch = outboundFetch(client(true));
    const res = await fetch(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token' }),
    });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(400);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="x"');
    expect(await res.json()).toEqual({ error: 'invalid_grant' });
    expect(seen).toEqual({
      method: 'POST',
      type: 'application/x-www-form-urlencoded',
      length: String('grant_type=refresh_token'.length),
    });
  });

  it('should refuse a loopback address unless the outbound client allows it', async () => {
    const s = await server((_req, res) => sendJson(res, 200, {}));
    const err = await outboundFetch(client(false))(s.url, { method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as OutboundError).code).toBe('URL_REFUSED');
    expect(s.requests).toHaveLength(0);
  });

  it('should not follow a redirect', async () => {
    const target = await server((_req, res) => sendJson(res, 200, { issuer: 'x' }));
    const s = await server((_req, res) => {
      res.writeHead(302, { location: target.url });
      res.end();
    });
    // redirect: 'manual' semantics: the 3xx comes back as it is, and nothing follows it.
    const res = await outboundFetch(client(true))(s.url, { method: 'GET' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(target.url);
    expect(target.requests).toHaveLength(0);
  });

  it('should cut a body larger than the OAuth cap', async () => {
    const s = await server((_req, res) => sendJson(res, 200, { big: 'x'.repeat(300 * 1024) }));
    const err = await outboundFetch(client(true))(s.url, { method: 'GET' }).catch((e: unknown) => e);
    expect((err as OutboundError).code).toBe('BODY_TOO_LARGE');
  });

  it('should be what oauth4webapi sends its requests through', async () => {
    const s = await server((req, res) => {
      const issuer = new URL(req.headers.host ? `http://${req.headers.host}` : 'http://x').origin;
      sendJson(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
      });
    });
    const issuer = new URL(s.url).origin;
    const response = await oauth.discoveryRequest(new URL(issuer), {
      algorithm: 'oauth2',
      [oauth.customFetch]: outboundFetch(client(true)),
      [oauth.allowInsecureRequests]: true,
    });
    const metadata = await oauth.processDiscoveryResponse(new URL(issuer), response);
    expect(metadata.token_endpoint).toBe(`${issuer}/token`);
    expect(s.requests[0]?.httpMethod).toBe('GET');
  });
});
