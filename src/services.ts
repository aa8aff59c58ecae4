import type { MikroORM } from '@mikro-orm/postgresql';
import type { AuthService } from './auth/auth.service.js';
import type { Config } from './config.js';
import type { EmbeddedPostgres } from './db/embedded.js';
import type { Notifier } from './db/notifier.js';
import type { DiscoveryService } from './discovery/discover.js';
import type { TurnEventHub } from './turns/events.js';
import type { ToolCache } from './turns/tool-cache.js';
import type { TurnService } from './turns/turn.service.js';
import type { SecretBox } from './connections/secrets.js';
import type { OutboundClient } from './http/outbound.js';
import type { Logger } from './logger.js';
import type { McpClient } from './mcp/client.js';
import type { Metrics } from './metrics/metrics.js';
import type { OAuthService } from './oauth/oauth.service.js';
import type { DescriptionPool } from './openapi/pool.js';
import type { CallGuard } from './guards/call-guard.js';
import type { Clock } from './clock.js';

/** The process-wide singletons, built once in app.ts and shared by every request. */
export interface Services {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  auth: AuthService;
  secrets: SecretBox;
  /** Every outbound request goes through this one client (address checks, caps, timeouts). */
  outbound: OutboundClient;
  /** Per-process MCP session state lives here. */
  mcp: McpClient;
  /** LISTEN/NOTIFY across instances. */
  notifier: Notifier;
  discovery: DiscoveryService;
  toolCache: ToolCache;
  turns: TurnService;
  turnEvents: TurnEventHub;
  /** Worker threads that parse and convert OpenAPI descriptions, off the event loop. */
  descriptions: DescriptionPool;
  /** OAuth sign-in and token renewal for MCP servers that ask people to sign in. */
  oauth: OAuthService;
  /** Prometheus counters and gauges behind `GET /metrics`. */
  metrics: Metrics;
  /** Rate limits and circuit breakers, shared by every instance (src/guards/). */
  guard: CallGuard;
  /** The call path's time (src/clock.ts). */
  clock: Clock;
  /** The embedded PostgreSQL this process supervises (readiness reads its state); null with DATABASE_URL. */
  embedded: EmbeddedPostgres | null;
}

/*
 * What each service is built with is declared by the service itself, as the narrow part of this
 * bag it reads, so that no service imports this file (the composition root): app.ts builds them in
 * order (toolCache, OAuth, discovery, turns) and hands each its part. Re-exported here for callers
 * that name them.
 */
export type { EndpointDeps } from './connections/endpoint.js';
export type { OAuthServiceDeps } from './oauth/oauth.service.js';
export type { DiscoveryDeps } from './discovery/discover.js';
export type { TurnDeps } from './turns/deps.js';
