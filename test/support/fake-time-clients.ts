/**
 * Clients on fake time (test/support/fake-clock.ts): an outbound client and an MCP client whose
 * deadlines, resume pauses and durations run on one `FakeClock`, so a test moves a 10 s budget on
 * by hand instead of waiting it out. Each is closed by the test's cleanup list.
 */
import { OutboundClient, type OutboundOptions } from '../../src/http/outbound.js';
import { McpClient, type McpClientOptions } from '../../src/mcp/client.js';
import type { FakeClock } from './fake-clock.js';

type Cleanups = (() => Promise<void>)[];

/** An `OutboundClient` allowed loopback, on `clock`. */
export function outboundOn(
  clock: FakeClock,
  cleanups: Cleanups,
  options: OutboundOptions = {},
): OutboundClient {
  const outbound = new OutboundClient({ allowLoopback: true, ...options, clock });
  cleanups.push(() => outbound.close());
  return outbound;
}

/** An `McpClient` (and its outbound client) on `clock`; cleanup waits for its background messages. */
export function mcpClientOn(clock: FakeClock, cleanups: Cleanups, options: McpClientOptions = {}): McpClient {
  const outbound = outboundOn(clock, cleanups);
  const c = new McpClient(outbound, { ...options, clock });
  cleanups.push(() => c.whenIdle());
  return c;
}
