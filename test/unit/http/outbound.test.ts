import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  isAddressAllowed,
  OutboundError,
  type OutboundOptions,
} from '../../../src/http/outbound.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { outboundClient } from '../../support/mcp-client.js';

/** A lookup that answers from a table and never touches DNS. */
function fakeLookup(table: Record<string, string[]>, calls: string[] = []): LookupFunction {
  return (hostname, options, callback) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    const list: LookupAddress[] = addresses.map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    if (options.all) callback(null, list);
    else callback(null, list[0]?.address ?? '', list[0]?.family ?? 4);
  };
}

const cleanups = cleanupAfterEach();
const client = (options: OutboundOptions = {}) => outboundClient(cleanups, options);

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OutboundError) return err;
    throw err;
  }
  throw new Error('expected an OutboundError');
}

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'unicast', true],
    ['2001:4860:4860::8888', 'unicast', true],
    ['127.0.0.1', 'loopback', false],
    ['127.255.0.9', 'loopback', false],
    ['::1', 'loopback', false],
    ['::ffff:127.0.0.1', 'loopback', false],
    ['10.1.2.3', 'private', false],
    ['172.16.0.1', 'private', false],
    ['192.168.1.1', 'private', false],
    ['169.254.169.254', 'linkLocal', false],
    ['fe80::1', 'linkLocal', false],
    ['fd00:ec2::254', 'uniqueLocal', false],
    ['100.100.100.200', 'carrierGradeNat', false],
    ['0.0.0.0', 'unspecified', false],
    ['::', 'unspecified', false],
    ['::ffff:10.0.0.1', 'ipv4Mapped', false],
    ['::ffff:8.8.8.8', 'ipv4Mapped', false],
    ['::a00:1', 'ipv4Compatible', false],
    ['64:ff9b::a00:1', 'rfc6052', false],
    ['224.0.0.1', 'multicast', false],
    ['255.255.255.255', 'broadcast', false],
    ['not-an-ip', 'invalid', false],
  ])('should classify %s as %s', (address, range, allowed) => {
    expect(classifyAddress(address)).toBe(range);
    expect(isAddressAllowed(address, false)).toBe(allowed);
  });

  it('should allow loopback, and only loopback, with allowLoopback', () => {
    expect(isAddressAllowed('127.0.0.1', true)).toBe(true);
    expect(isAddressAllowed('::1', true)).toBe(true);
    expect(isAddressAllowed('10.0.0.1', true)).toBe(false);
    expect(isAddressAllowed('169.254.169.254', true)).toBe(false);
  });
});

describe('OutboundClient.checkUrl', () => {
  it.each([
    ['/relative/path'],
    ['not a url'],
    ['ftp://files.example.com/x'],
    ['file:///etc/passwd'],
    ['http://api.example.com/mcp'],
    ['http://localhost:8080/mcp'],
  ])('should refuse %s with URL_REFUSED', (url) => {
    const err = (() => {
      try {
        client().checkUrl(url);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as OutboundError).code).toBe('URL_REFUSED');
    expect((err as OutboundError).reachedServer).toBe(false);
  });

  it('should refuse credentials in the URL without echoing them', () => {
    let err: unknown;
    try {
      client().checkUrl('https://alice:s3cr3t@api.example.com/');
    } catch (e) {
      err = e;
    }
    expect((err as OutboundError).code).toBe('URL_REFUSED');
    expect((err as OutboundError).message).not.toContain('s3cr3t');
    expect((err as OutboundError).message).not.toContain('alice');
  });

  it('should accept https:// and keep the URL', () => {
    expect(client().checkUrl('https://api.example.com/mcp?x=1').href).toBe('https://api.example.com/mcp?x=1');
  });

  it('should allow http:// to loopback names only with allowLoopback', () => {
    const c = client({ allowLoopback: true });
    expect(c.checkUrl('http://localhost:9/x').hostname).toBe('localhost');
    expect(c.checkUrl('http://127.0.0.1:9/x').hostname).toBe('127.0.0.1');
    expect(c.checkUrl('http://[::1]:9/x').hostname).toBe('[::1]');
    expect(() => c.checkUrl('http://api.example.com/')).toThrow(OutboundError);
  });

  it('should allow http:// to an allow-listed host, and honour a port in the entry', () => {
    const c = client({ allowHosts: ['tools.internal', 'svc.internal:8080'] });
    expect(c.checkUrl('http://tools.internal/x').hostname).toBe('tools.internal');
    expect(c.checkUrl('http://TOOLS.internal:1234/x').hostname).toBe('tools.internal');
    expect(c.checkUrl('http://svc.internal:8080/x').port).toBe('8080');
    expect(() => c.checkUrl('http://svc.internal:8081/x')).toThrow(/http:\/\/ is not allowed/);
  });

  it.each([
    ['https://10.0.0.1/', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'linkLocal'],
    ['https://[fd00:ec2::254]/', 'uniqueLocal'],
    ['https://[::ffff:10.0.0.1]/', 'ipv4Mapped'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
  ])('should refuse the IP literal in %s with ADDRESS_REFUSED (%s)', (url, range) => {
    let err: unknown;
    try {
      client().checkUrl(url);
    } catch (e) {
      err = e;
    }
    expect((err as OutboundError).code).toBe('ADDRESS_REFUSED');
    expect((err as OutboundError).data.range).toBe(range);
  });

  it('should accept an allow-listed private IP literal', () => {
    expect(client({ allowHosts: ['10.0.0.1'] }).checkUrl('http://10.0.0.1/x').hostname).toBe('10.0.0.1');
  });
});

describe('OutboundClient.request refusals (no sockets)', () => {
  it.each([
    [['10.0.0.5'], 'private'],
    [['169.254.169.254'], 'linkLocal'],
    [['::ffff:127.0.0.1'], 'loopback'],
    [['::ffff:192.168.0.1'], 'ipv4Mapped'],
    [['fd12::1'], 'uniqueLocal'],
    [['0.0.0.0'], 'unspecified'],
    [['93.184.216.34', '127.0.0.1'], 'loopback'],
  ])(
    'should refuse a name resolving to %j at connect time with ADDRESS_REFUSED',
    async (addresses, range) => {
      const calls: string[] = [];
      const c = client({ lookup: fakeLookup({ 'rebind.example.com': addresses }, calls) });
      const err = await failure(c.request('https://rebind.example.com/mcp'));
      expect(err.code).toBe('ADDRESS_REFUSED');
      expect(err.reachedServer).toBe(false);
      expect(err.data.range).toBe(range);
      expect(calls).toEqual(['rebind.example.com']);
    },
  );

  it('should check the addresses of every new connection, so a rebinding name is refused after passing checkUrl', async () => {
    const calls: string[] = [];
    const c = client({ lookup: fakeLookup({ 'rebind.example.com': ['10.9.9.9'] }, calls) });
    expect(c.checkUrl('https://rebind.example.com/').hostname).toBe('rebind.example.com');
    expect((await failure(c.request('https://rebind.example.com/a'))).code).toBe('ADDRESS_REFUSED');
    expect((await failure(c.request('https://rebind.example.com/b'))).code).toBe('ADDRESS_REFUSED');
    expect(calls).toHaveLength(2);
  });

  it('should report a DNS failure as CONNECT_FAILED that never reached the server', async () => {
    const c = client({ lookup: fakeLookup({}) });
    const err = await failure(c.request('https://nowhere.example.com/'));
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.reachedServer).toBe(false);
    expect(err.data.cause).toBe('ENOTFOUND');
  });

  it.each([
    [{ 'x-api-key': 'abc\r\nInjected: yes' }],
    [{ 'x-api-key': 'abc\ndef' }],
    [{ 'x-api-key': 'abc\0' }],
    [{ 'bad name': 'v' }],
    [{ Host: 'internal.example' }],
    [{ 'Transfer-Encoding': 'chunked' }],
  ])('should refuse the headers %j with HEADER_INVALID and never echo a value', async (headers) => {
    const calls: string[] = [];
    const c = client({ lookup: fakeLookup({}, calls) });
    const err = await failure(c.request('https://api.example.com/', { headers }));
    expect(err.code).toBe('HEADER_INVALID');
    expect(err.reachedServer).toBe(false);
    for (const value of Object.values(headers)) expect(err.message).not.toContain(value);
    expect(calls).toEqual([]);
  });

  it('should refuse an http:// URL before any lookup', async () => {
    const calls: string[] = [];
    const c = client({ lookup: fakeLookup({}, calls) });
    expect((await failure(c.request('http://api.example.com/'))).code).toBe('URL_REFUSED');
    expect(calls).toEqual([]);
  });

  it('should time out at the deadline when connecting hangs', async () => {
    const looked: string[] = [];
    let release = (): void => undefined;
    const hang: LookupFunction = (hostname, _options, callback) => {
      looked.push(hostname);
      release = () => callback(new Error('released by the test'), '', 4);
    };
    // The connect budget outlasts the test's own timeout: only the deadline can end the wait.
    const c = client({ lookup: hang, connectTimeoutMs: 600_000 });
    const started = performance.now();
    const err = await failure(c.request('https://slow.example.com/', { timeoutMs: 150 }));
    expect(err.code).toBe('TIMEOUT');
    expect(err.data.timeoutMs).toBe(150);
    // Not before the deadline: a timer never fires early, however slow the machine.
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    // It was still connecting; the test ends the lookup so that closing the client need not wait.
    expect(looked).toEqual(['slow.example.com']);
    release();
  });

  it('should refuse an already aborted signal with ABORTED', async () => {
    const c = client({ lookup: fakeLookup({}) });
    const err = await failure(c.request('https://api.example.com/', { signal: AbortSignal.abort() }));
    expect(err.code).toBe('ABORTED');
  });
});
