import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../connections/secrets.js';
import type { CallGuard } from '../guards/call-guard.js';
import type { OutboundClient } from '../http/outbound.js';
import type { Logger } from '../logger.js';
import type { McpClient } from '../mcp/client.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OAuthService } from '../oauth/oauth.service.js';

/**
 * What turns are built with (turn.service.ts, dispatch.ts): declare tools from the cache, call
 * them, record every call. A part of app.ts's services, declared here so that no turn module
 * imports the composition root (src/services.ts), which would close an import cycle.
 */
export interface TurnDeps {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  metrics: Metrics;
  mcp: McpClient;
  oauth: OAuthService;
  outbound: OutboundClient;
  secrets: SecretBox;
  guard: CallGuard;
  /** Time on the call path (src/clock.ts): real in production, fake in tests. */
  clock: Clock;
}
