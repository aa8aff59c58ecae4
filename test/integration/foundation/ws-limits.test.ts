/**
 * graphql-ws message caps over a real WebSocket: a small cap until `connection_init` is accepted
 * (past it `ws` refuses the frame at its header: 1009), then the cap of the socket's role (the same
 * as its HTTP body cap; past it the socket closes with 4413 "Message too large" before anything of
 * the message is parsed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { WS_UNACCEPTED_MAX_BYTES } from '../../../src/http/edge.js';
import { MESSAGE_TOO_LARGE_REASON, WsCloseCode } from '../../../src/http/ws-adapter.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

const MiB = 1024 * 1024;
let t: TestApp;
let admin: string;
let customer: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok<{ createWorkspace: { workspace: { id: string } } }, unknown>(
    'mutation { createWorkspace(input: { name: "WS limits" }) { workspace { id } } }',
    {},
    admin,
  );
  const raw = Buffer.from(ws.createWorkspace.workspace.id, 'base64url').toString().split(':')[1]!;
  customer = await t.token(Role.CUSTOMER, raw);
});

afterAll(async () => {
  await t.stop();
});

interface Peer {
  socket: WebSocket;
  /** The next message the server sends, parsed. */
  next(): Promise<{ type: string; id?: string; payload?: unknown }>;
  closed: Promise<{ code: number; reason: string }>;
}

async function open(): Promise<Peer> {
  const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
  const queue: string[] = [];
  const waiting: ((m: string) => void)[] = [];
  socket.on('message', (data: Buffer) => {
    const waiter = waiting.shift();
    if (waiter) waiter(data.toString());
    else queue.push(data.toString());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('open', resolve));
  return {
    socket,
    closed,
    next: () =>
      new Promise((resolve) => {
        const parse = (m: string) => resolve(JSON.parse(m) as { type: string });
        const queued = queue.shift();
        if (queued !== undefined) parse(queued);
        else waiting.push(parse);
      }),
  };
}

/** An accepted socket of `token`'s role. */
async function accepted(token: string): Promise<Peer> {
  const peer = await open();
  peer.socket.send(
    JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }),
  );
  expect((await peer.next()).type).toBe('connection_ack');
  return peer;
}

/** A subscribe message of exactly `bytes` bytes: a small query and a padding variable. */
function subscribeOf(bytes: number): string {
  const head = {
    id: '1',
    type: 'subscribe',
    payload: { query: '{ viewer { role } }', variables: { pad: '' } },
  };
  const base = Buffer.byteLength(JSON.stringify(head));
  head.payload.variables.pad = 'x'.repeat(bytes - base);
  const text = JSON.stringify(head);
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

const tooLarge = { code: WsCloseCode.MessageTooLarge, reason: MESSAGE_TOO_LARGE_REASON };
/** `ws`'s own refusal of a frame over the socket's frame cap, at its header: nothing of it buffered. */
const frameTooLarge = { code: 1009, reason: '' };

describe('graphql-ws message caps', () => {
  it('should close with 1009 a message over 16 KiB before connection_init, refused by `ws` at its frame header', async () => {
    const peer = await open();
    // Not even JSON: it is refused on its size alone.
    peer.socket.send('x'.repeat(WS_UNACCEPTED_MAX_BYTES + 1));
    expect(await peer.closed).toEqual(frameTooLarge);
  });

  it('should close with 1009 a connection_init over 16 KiB, even one carrying a valid token', async () => {
    const peer = await open();
    peer.socket.send(
      JSON.stringify({
        type: 'connection_init',
        payload: { authorization: `Bearer ${admin}`, pad: 'x'.repeat(WS_UNACCEPTED_MAX_BYTES) },
      }),
    );
    expect(await peer.closed).toEqual(frameTooLarge);
  });

  it('should accept a connection_init just under 16 KiB', async () => {
    const peer = await open();
    const init = { type: 'connection_init', payload: { authorization: `Bearer ${customer}`, pad: '' } };
    init.payload.pad = 'x'.repeat(WS_UNACCEPTED_MAX_BYTES - Buffer.byteLength(JSON.stringify(init)));
    peer.socket.send(JSON.stringify(init));
    expect((await peer.next()).type).toBe('connection_ack');
    peer.socket.close();
  });

  it('should close with 4413 a customer’s message over 1 MiB, and run one under it', async () => {
    const ok = await accepted(customer);
    ok.socket.send(subscribeOf(MiB - 1024));
    expect(await ok.next()).toMatchObject({
      type: 'next',
      id: '1',
      payload: { data: { viewer: { role: 'CUSTOMER' } } },
    });
    ok.socket.close();

    const over = await accepted(customer);
    over.socket.send(subscribeOf(MiB + 1));
    expect(await over.closed).toEqual(tooLarge);
  });

  it('should run an admin’s 2 MiB message (staff have the larger cap), and close one over 8 MiB', async () => {
    const ok = await accepted(admin);
    ok.socket.send(subscribeOf(2 * MiB));
    expect(await ok.next()).toMatchObject({
      type: 'next',
      id: '1',
      payload: { data: { viewer: { role: 'ADMIN' } } },
    });
    ok.socket.close();

    const over = await accepted(admin);
    over.socket.send(subscribeOf(8 * MiB + 1));
    // Past the largest cap `ws` itself stops reading the frame (1009) before it is buffered.
    expect((await over.closed).code).toBe(1009);
  });

  it('should close with 4401 a small subscribe sent before connection_init, parsing no query', async () => {
    const peer = await open();
    peer.socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{'.repeat(10_000) } }));
    expect(await peer.closed).toEqual({ code: 4401, reason: 'Unauthorized' });
  });
});
