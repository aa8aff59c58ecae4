/**
 * Our own MCP and outbound clients for tests that drive them directly, each closed by a clean-up
 * list once idle, and the endpoint those tests call: no credential, a fresh id each time.
 */
import { OutboundClient, type OutboundOptions } from '../../src/http/outbound.js';
import { McpClient, type McpEndpoint } from '../../src/mcp/client.js';
import type { CleanupSink } from './cleanups.js';

/** An outbound client (loopback allowed unless `options` say otherwise), closed by `cleanups`. */
export function outboundClient(
  cleanups: CleanupSink,
  options: OutboundOptions = { allowLoopback: true },
): OutboundClient {
  const outbound = new OutboundClient(options);
  cleanups.push(() => outbound.close());
  return outbound;
}

/**
 * An MCP client over its own loopback-allowed outbound client (both on `options.clock` when given);
 * `cleanups` waits for it to go idle, then closes both.
 */
export function mcpClient(
  cleanups: CleanupSink,
  options: ConstructorParameters<typeof McpClient>[1] = {},
): McpClient {
  const outbound = new OutboundClient({ allowLoopback: true, clock: options.clock });
  const client = new McpClient(outbound, options);
  cleanups.push(async () => {
    await client.whenIdle();
    await outbound.close();
  });
  return client;
}

let nextId = 0;

/** An endpoint at `url` with no credential, a 5 s timeout and an id of its own (`<prefix>-<n>`), `extra` over it. */
export function mcpEndpoint(url: string, extra: Partial<McpEndpoint> = {}, prefix = 'conn'): McpEndpoint {
  return { id: `${prefix}-${++nextId}`, url, auth: { kind: 'none' }, timeoutMs: 5_000, ...extra };
}
