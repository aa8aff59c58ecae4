/**
 * A WebSocket that has not been accepted holds little and not for long (issue 25, item 2): `ws`
 * itself refuses a frame over 16 KiB at its header, before buffering it; the sockets not yet
 * accepted are capped per instance; and a socket refused before acceptance is terminated, not left
 * waiting 30 s for a closing handshake its peer never sends. Measured on the real service in a
 * child process (its RSS alone, not this test process's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import WebSocket from 'ws';
import { Role } from '../../../src/auth/api-token.entity.js';
import { mintToken } from '../../../src/auth/auth.service.js';
import { openOrm } from '../../../src/db/orm.js';

const root = new URL('../../..', import.meta.url).pathname;
const MiB = 1024 * 1024;
const INIT_WAIT_MS = 1_000;
const MAX_UNACCEPTED = 30;
const SOCKETS = 24;

let child: ChildProcess | null = null;
let dataDir: string;
let url: URL;
let token: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ct-ws-preinit-'));
  const orm = await openOrm({ databaseUrl: inject('databaseUrl') });
  token = (await mintToken(orm.em.fork(), { role: Role.ADMIN, workspaceId: null, label: 'ws preinit' }))
    .token;
  await orm.close();
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      DATA_DIR: dataDir,
      SECRET_KEY: randomBytes(32).toString('hex'),
      PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      WS_INIT_WAIT_MS: String(INIT_WAIT_MS),
      WS_UNACCEPTED_MAX: String(MAX_UNACCEPTED),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  url = await new Promise<URL>((resolve, reject) => {
    child!.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const match = /"url":"(http:\/\/[^"]+)","msg":"listening"/.exec(out);
      if (match) resolve(new URL(match[1]!));
    });
    child!.once('exit', (code) => reject(new Error(`the service exited with ${code}:\n${out}`)));
  });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

/** The service's resident set, in bytes (Linux's /proc). */
async function serviceRss(): Promise<number> {
  const status = await readFile(`/proc/${child!.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

interface RawPeer {
  socket: Socket;
  /** The HTTP status line's code the upgrade got. */
  status: number;
  /** When the upgrade was answered. */
  openedAt: number;
  /** Resolves with the time the server hung up. */
  gone: Promise<number>;
}

/** A WebSocket upgrade by hand, so that a test can send part of a frame. */
async function rawUpgrade(): Promise<RawPeer> {
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined);
  const gone = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    [
      'GET /graphql HTTP/1.1',
      `Host: ${url.host}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Protocol: graphql-transport-ws',
      '',
      '',
    ].join('\r\n'),
  );
  const head = await new Promise<string>((resolve) => {
    let text = '';
    const onData = (c: Buffer): void => {
      text += c.toString('latin1');
      if (text.includes('\r\n\r\n')) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(text));
  });
  // Whatever the server sends later (a close frame) is read and dropped, as a client would.
  socket.on('data', () => undefined);
  return {
    socket,
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0),
    openedAt: performance.now(),
    gone,
  };
}

/** A masked text frame's header announcing `length` bytes (mask key 0, so the payload goes as is). */
function frameHeader(length: number): Buffer {
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

/** Writes `data`; resolves once it is handed to the kernel, or the socket failed or closed. */
function sendAll(socket: Socket, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.write(data, () => resolve());
  });
}

async function accepted(): Promise<WebSocket> {
  const socket = new WebSocket(new URL('/graphql', url.href.replace(/^http/, 'ws')), 'graphql-transport-ws');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await new Promise<void>((resolve) =>
    socket.once('message', (m: Buffer) => {
      expect(JSON.parse(m.toString())).toEqual({ type: 'connection_ack' });
      resolve();
    }),
  );
  return socket;
}

describe('graphql-ws sockets before connection_init is accepted', () => {
  it(
    `should hold far less than ${SOCKETS} × 8 MiB for ${SOCKETS} sockets each sending all but the last byte of an 8 MiB frame, and drop each within the init wait and a second`,
    { timeout: 90_000 },
    async () => {
      // Warm the service up, so that the baseline is not its first allocations.
      (await accepted()).close();
      const baseline = await serviceRss();
      const payload = Buffer.alloc(8 * MiB - 1, 0x61);
      let peak = baseline;
      const sampler = setInterval(() => {
        void serviceRss().then(
          (rss) => (peak = Math.max(peak, rss)),
          () => undefined,
        );
      }, 25);
      const peers = await Promise.all(Array.from({ length: SOCKETS }, () => rawUpgrade()));
      expect(peers.map((p) => p.status)).toEqual(peers.map(() => 101));
      const header = frameHeader(8 * MiB);
      for (const p of peers) p.socket.write(header);
      await Promise.all(peers.map((p) => sendAll(p.socket, payload)));
      // Sampled until the service has dropped every one (after the init wait), not for a set time.
      const closedAfter = await Promise.all(
        peers.map((p) =>
          Promise.race([
            p.gone.then((at) => at - p.openedAt),
            new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 40_000)),
          ]),
        ),
      );
      peak = Math.max(peak, await serviceRss());
      clearInterval(sampler);
      for (const p of peers) p.socket.destroy();
      const growth = peak - baseline;
      console.log(
        `ws pre-init: RSS ${(baseline / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} MiB (+${(growth / MiB).toFixed(1)} MiB); closed after ${Math.round(Math.min(...closedAfter))}–${Math.round(Math.max(...closedAfter))} ms`,
      );
      // 24 × 8 MiB would be 192 MiB; a refused header buffers none of it.
      expect(growth).toBeLessThan(32 * MiB);
      for (const ms of closedAfter) expect(ms).toBeLessThan(INIT_WAIT_MS + 1_000);
    },
  );

  it('should drop within the init wait and a second a socket that sends part of a small frame and never finishes it', async () => {
    const peer = await rawUpgrade();
    expect(peer.status).toBe(101);
    await sendAll(peer.socket, Buffer.concat([frameHeader(8 * 1024), Buffer.alloc(4 * 1024, 0x61)]));
    const after = (await peer.gone) - peer.openedAt;
    expect(after).toBeGreaterThanOrEqual(INIT_WAIT_MS - 50);
    expect(after).toBeLessThan(INIT_WAIT_MS + 1_000);
  });

  it('should still tell an idle client 4408 before it is terminated', async () => {
    const socket = new WebSocket(
      new URL('/graphql', url.href.replace(/^http/, 'ws')),
      'graphql-transport-ws',
    );
    socket.on('error', () => undefined);
    const openedAt = await new Promise<number>((resolve) =>
      socket.once('open', () => resolve(performance.now())),
    );
    const closed = await new Promise<{ code: number; reason: string; after: number }>((resolve) =>
      socket.once('close', (code, reason) =>
        resolve({ code, reason: reason.toString(), after: performance.now() - openedAt }),
      ),
    );
    expect({ code: closed.code, reason: closed.reason }).toEqual({
      code: 4408,
      reason: 'Connection initialisation timeout',
    });
    expect(closed.after).toBeLessThan(INIT_WAIT_MS + 1_000);
  });

  it(`should refuse the upgrade (503) past ${MAX_UNACCEPTED} unaccepted sockets, not counting accepted ones or an upgrade with a valid token`, async () => {
    const acceptedBefore = await accepted();
    const held = await Promise.all(Array.from({ length: MAX_UNACCEPTED }, () => rawUpgrade()));
    expect(held.map((p) => p.status)).toEqual(held.map(() => 101));
    const over = await rawUpgrade();
    expect(over.status).toBe(503);
    await over.gone;
    const withToken = new WebSocket(
      new URL('/graphql', url.href.replace(/^http/, 'ws')),
      'graphql-transport-ws',
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    await new Promise((resolve, reject) => {
      withToken.once('open', resolve);
      withToken.once('error', reject);
    });
    withToken.close();
    acceptedBefore.close();
    // A socket that goes frees its place.
    held.pop()!.socket.destroy();
    let again = await rawUpgrade();
    for (let i = 0; again.status !== 101 && i < 40; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await rawUpgrade();
    }
    expect(again.status).toBe(101);
    for (const p of [...held, again]) p.socket.destroy();
  });
});
