/**
 * The outbound client against real sockets on loopback: the refusals and bounds that need a peer.
 */
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundError, type OutboundOptions, type OutboundResponse } from '../../../src/http/outbound.js';
import { waitUntil } from '../../support/wait.js';
import { outboundClient } from '../../support/mcp-client.js';
import { FakeClock } from '../../support/fake-clock.js';

interface Peer {
  url: string;
  port: number;
  seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  connections: () => number;
  closed: () => number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function peer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Peer> {
  const seen: Peer['seen'] = [];
  let connections = 0;
  let closed = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      handler(req, res);
    });
  });
  server.on('connection', (socket) => {
    connections++;
    socket.on('close', () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    connections: () => connections,
    closed: () => closed,
  };
}

const client = (options?: OutboundOptions) => outboundClient(cleanups, options);

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OutboundError) return err;
    throw err;
  }
  throw new Error('expected an OutboundError');
}

const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

describe('OutboundClient over loopback', () => {
  it('should send requests over reused keep-alive sockets', async () => {
    const p = await peer((_req, res) => res.end('hello'));
    const c = client();
    for (let i = 0; i < 6; i++) {
      const res = await c.request(`${p.url}/x?i=${i}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('hello');
    }
    // undici frees a socket a tick after the body ends, so a back-to-back request may open a
    // second one (a bare undici Agent does the same); never one per request.
    expect(p.connections()).toBeLessThanOrEqual(2);
    expect(p.seen.map((s) => s.url)).toEqual(['/x?i=0', '/x?i=1', '/x?i=2', '/x?i=3', '/x?i=4', '/x?i=5']);
  });

  it('should refuse loopback without allowLoopback, at the URL and at connect time', async () => {
    const p = await peer((_req, res) => res.end('no'));
    const strict = client({});
    expect((await failure(strict.request(`${p.url}/`))).code).toBe('URL_REFUSED');
    const viaName = client({ lookup: toLoopback });
    const err = await failure(viaName.request(`https://peer.example.com:${p.port}/`));
    expect(err.code).toBe('ADDRESS_REFUSED');
    expect(err.reachedServer).toBe(false);
    expect(p.connections()).toBe(0);
  });

  it("should judge an address by each client's own options, on every request", async () => {
    const p = await peer((_req, res) => res.end('ok'));
    const open = client();
    const strict = client({});
    for (let i = 0; i < 3; i++) {
      expect(await (await open.request(`${p.url}/same`)).text()).toBe('ok');
      expect((await failure(strict.request(`${p.url}/same`))).code).toBe('URL_REFUSED');
    }
    expect(p.seen).toHaveLength(3);
  });

  it('should let an allow-listed host use http:// and a private address', async () => {
    const p = await peer((_req, res) => res.end('inside'));
    const c = client({ allowHosts: [`tools.internal:${p.port}`], lookup: toLoopback });
    expect(await c.fetchText(`http://tools.internal:${p.port}/x`, 1024)).toBe('inside');
    expect(p.seen[0]?.headers.host).toBe(`tools.internal:${p.port}`);
  });

  it('should let an allow-listed host through whatever its spelling, as the save-time check does (issue 25)', async () => {
    const p = await peer((_req, res) => res.end('inside'));
    const c = client({ allowHosts: [`Tools.Internal.:${p.port}`], lookup: toLoopback });
    expect(await c.fetchText(`http://TOOLS.internal.:${p.port}/x`, 1024)).toBe('inside');
    expect(await c.fetchText(`http://tools.internal:${p.port}/y`, 1024)).toBe('inside');
    expect(p.seen).toHaveLength(2);
  });

  it('should cut a 50 MB chunked body at the cap while streaming', async () => {
    let written = 0;
    const p = await peer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => undefined);
      pump();
    });
    const c = client();
    const res = await c.request(`${p.url}/big`, { maxBodyBytes: 1024 * 1024 });
    const err = await failure(res.text());
    expect(err.code).toBe('BODY_TOO_LARGE');
    expect(err.data.limitBytes).toBe(1024 * 1024);
    // Cut early: the server never got to write anything near 50 MB.
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it('should refuse a declared Content-Length over the cap before reading', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write('x');
    });
    const c = client();
    const res = await c.request(`${p.url}/`, { maxBodyBytes: 1000 });
    expect((await failure(res.text())).code).toBe('BODY_TOO_LARGE');
  });

  it('should cap the streamed body of the iterator as well', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(600));
      res.write(Buffer.alloc(600));
      res.end();
    });
    const c = client();
    const res = await c.request(`${p.url}/`, { maxBodyBytes: 1000 });
    let read = 0;
    const err = await failure(
      (async () => {
        for await (const chunk of res.body) read += chunk.length;
      })(),
    );
    expect(err.code).toBe('BODY_TOO_LARGE');
    expect(read).toBeLessThanOrEqual(1000);
  });

  it('should time out when the server never answers', async () => {
    let held = false;
    const p = await peer((_req, res) => res.on('close', () => (held = true)));
    const clock = new FakeClock();
    const c = client({ allowLoopback: true, clock });
    const pending = failure(c.request(`${p.url}/`, { timeoutMs: 10_000 }));
    await waitUntil(() => p.seen.length === 1);
    // Not before the deadline, and by it: the client dropped the connection the server still held.
    await clock.advance(9_999);
    expect(held).toBe(false);
    await clock.advance(1);
    const err = await pending;
    expect(err.code).toBe('TIMEOUT');
    expect(err.reachedServer).toBe(true);
    expect(err.data.timeoutMs).toBe(10_000);
    await waitUntil(() => held);
  });

  it('should time out on a body that drips past the deadline', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(200);
      const t = setInterval(() => res.write('.'), 20);
      res.on('close', () => {
        clearInterval(t);
        dropped = true;
      });
    });
    let dropped = false;
    const clock = new FakeClock();
    const c = client({ allowLoopback: true, clock });
    const res = await c.request(`${p.url}/`, { timeoutMs: 10_000 });
    const pending = failure(res.text());
    // The deadline covers the body: each drop does not push it back, or this would read forever.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 25));
      await clock.advance(1_000);
    }
    const err = await pending;
    expect(err.code).toBe('TIMEOUT');
    expect(err.data.timeoutMs).toBe(10_000);
    await waitUntil(() => dropped);
  });

  it('should report a refused connection as CONNECT_FAILED that never reached the server', async () => {
    const p = await peer(() => undefined);
    const url = `${p.url}/`;
    for (const fn of cleanups.splice(0)) await fn(); // stop the peer: nothing listens on its port now
    const c = client();
    const err = await failure(c.request(url));
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.reachedServer).toBe(false);
    expect(err.data.cause).toBe('ECONNREFUSED');
  });

  it('should report a connection reset mid-body as TRANSPORT_ERROR that reached the server', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const c = client();
    const res = await c.request(`${p.url}/`);
    const err = await failure(res.text());
    expect(err.code).toBe('TRANSPORT_ERROR');
    expect(err.reachedServer).toBe(true);
  });

  it('should follow a same-origin redirect, keeping the method and body for 307', async () => {
    const p = await peer((req, res) => {
      if (req.url === '/old') {
        res.writeHead(307, { location: '/new' });
        res.end();
      } else {
        res.end(`${req.method} ${req.url}`);
      }
    });
    const c = client();
    const res = await c.request(`${p.url}/old`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: 'Bearer k' },
    });
    expect(await res.text()).toBe('POST /new');
    expect(res.url.pathname).toBe('/new');
    expect(p.seen[1]).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(p.seen[1]?.headers.authorization).toBe('Bearer k');
  });

  it('should turn a POST into a GET on 303', async () => {
    const p = await peer((req, res) => {
      if (req.url === '/form') {
        res.writeHead(303, { location: '/done' });
        res.end();
      } else res.end(`${req.method} ${req.url}`);
    });
    const c = client();
    expect(await (await c.request(`${p.url}/form`, { method: 'POST', body: 'x' })).text()).toBe('GET /done');
  });

  it('should drop credentials on a cross-origin redirect', async () => {
    const target = await peer((_req, res) => res.end('there'));
    const origin = await peer((_req, res) => {
      res.writeHead(302, { location: `http://localhost:${target.port}/landing` });
      res.end();
    });
    const c = client();
    const res = await c.request(`${origin.url}/`, {
      headers: { authorization: 'Bearer secret', 'x-api-key': 'k', accept: 'text/plain' },
    });
    expect(await res.text()).toBe('there');
    expect(target.seen[0]?.headers.authorization).toBeUndefined();
    expect(target.seen[0]?.headers['x-api-key']).toBeUndefined();
    expect(target.seen[0]?.headers.accept).toBe('text/plain');
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'URL_REFUSED'],
    ['https://169.254.169.254/latest/meta-data/', 'ADDRESS_REFUSED'],
    ['https://10.0.0.1/', 'ADDRESS_REFUSED'],
    ['ftp://example.com/', 'URL_REFUSED'],
  ])('should refuse a redirect to %s with REDIRECT_REFUSED', async (location, reason) => {
    const p = await peer((_req, res) => {
      res.writeHead(302, { location });
      res.end();
    });
    const c = client();
    const err = await failure(c.request(`${p.url}/`));
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(err.data.reason).toBe(reason);
  });

  it('should refuse a redirect to a name that resolves to a private address at connect time', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(302, { location: 'https://internal.example.com/' });
      res.end();
    });
    const privateLookup: LookupFunction = (_h, options, callback) => {
      if (options.all) callback(null, [{ address: '10.1.1.1', family: 4 }]);
      else callback(null, '10.1.1.1', 4);
    };
    const c = client({ allowLoopback: true, lookup: privateLookup });
    const err = await failure(c.request(`${p.url}/`));
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(err.data.reason).toBe('ADDRESS_REFUSED');
  });

  it('should refuse a redirect loop after maxRedirects hops', async () => {
    const p = await peer((req, res) => {
      res.writeHead(302, { location: req.url === '/a' ? '/b' : '/a' });
      res.end();
    });
    const c = client();
    const err = await failure(c.request(`${p.url}/a`, { maxRedirects: 2 }));
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(p.seen).toHaveLength(3);
  });

  it('should hand a 3xx back as it is with maxRedirects: 0', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(302, { location: 'https://169.254.169.254/' });
      res.end();
    });
    const res = await client().request(`${p.url}/`, { maxRedirects: 0 });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://169.254.169.254/');
    await res.dump();
    expect(p.seen).toHaveLength(1);
  });

  it('should throw HTTP_STATUS from fetchText for a non-2xx answer', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(404);
      res.end('missing');
    });
    const err = await failure(client().fetchText(`${p.url}/spec.json`, 1024));
    expect(err.code).toBe('HTTP_STATUS');
    expect(err.data.status).toBe(404);
  });

  it('should throw BODY_TOO_LARGE from fetchText past its cap', async () => {
    const p = await peer((_req, res) => res.end('x'.repeat(2048)));
    expect((await failure(client().fetchText(`${p.url}/`, 1024))).code).toBe('BODY_TOO_LARGE');
  });

  it('should end a request as ABORTED when the caller aborts', async () => {
    const p = await peer(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await failure(client().request(`${p.url}/`, { signal: controller.signal }));
    expect(err.code).toBe('ABORTED');
  });

  it("should let go of the caller's signal once a body is read, drained or cut, or the request fails", async () => {
    const p = await peer((req, res) => {
      if (req.url === '/chunked') {
        res.write('a');
        res.end('b');
      } else if (req.url === '/big') res.end('x'.repeat(2048));
      else res.end('ok');
    });
    const c = client();
    const controller = new AbortController();
    const signal = controller.signal;
    const listeners = (): number => getEventListeners(signal, 'abort').length;
    const ended: [string, (res: OutboundResponse) => Promise<unknown>][] = [
      ['text with a length', (res) => res.text()],
      ['text without one', (res) => res.text()],
      ['dump', (res) => res.dump()],
      [
        'iterate',
        async (res) => {
          for await (const chunk of res.body) void chunk;
        },
      ],
      [
        'break out of the iteration',
        async (res) => {
          for await (const chunk of res.body) if (chunk) break;
        },
      ],
    ];
    for (const [what, read] of ended) {
      const res = await c.request(`${p.url}/${what === 'text with a length' ? 'ok' : 'chunked'}`, { signal });
      expect({ what, listening: listeners() }).toEqual({ what, listening: 1 });
      await read(res);
      expect({ what, listening: listeners() }).toEqual({ what, listening: 0 });
    }
    const big = await c.request(`${p.url}/big`, { signal, maxBodyBytes: 1024 });
    expect((await failure(big.text())).code).toBe('BODY_TOO_LARGE');
    expect(listeners()).toBe(0);
    expect((await failure(c.request(`http://127.0.0.1:1/`, { signal }))).code).toBe('CONNECT_FAILED');
    expect(listeners()).toBe(0);
    expect(controller.signal.aborted).toBe(false);
  });

  it('should parse JSON and refuse invalid JSON with INVALID_JSON', async () => {
    const p = await peer((req, res) => res.end(req.url === '/ok' ? '{"a":[1]}' : '<html>'));
    const c = client();
    expect(await (await c.request(`${p.url}/ok`)).json()).toEqual({ a: [1] });
    expect((await failure((await c.request(`${p.url}/bad`)).json())).code).toBe('INVALID_JSON');
  });
});
