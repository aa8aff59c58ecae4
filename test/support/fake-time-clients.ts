/**
 * Clients on fake time (test/support/fake-clock.ts): an outbound client and an MCP client whose
 * deadlines, resume pauses and durations run on one `FakeClock`, so a test moves a 10 s budget on
 * by hand instead of waiting it out. Each is closed by the test's clean-up list
 * (test/support/mcp-client.ts builds them).
 */
import type { OutboundClient, OutboundOptions } from '../../src/http/outbound.js';
import type { McpClient, McpClientOptions } from '../../src/mcp/client.js';
import type { CleanupSink } from './cleanups.js';
import type { FakeClock } from './fake-clock.js';
import { mcpClient, outboundClient } from './mcp-client.js';

/** An `OutboundClient` allowed loopback, on `clock`. */
export function outboundOn(
  clock: FakeClock,
  cleanups: CleanupSink,
  options: OutboundOptions = {},
): OutboundClient {
  return outboundClient(cleanups, { allowLoopback: true, ...options, clock });
}

/** An `McpClient` (and its outbound client) on `clock`; cleanup waits for its background messages. */
export function mcpClientOn(
  clock: FakeClock,
  cleanups: CleanupSink,
  options: McpClientOptions = {},
): McpClient {
  return mcpClient(cleanups, { ...options, clock });
}
