import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261201070000TraceContext } from '../../migrations/Migration20261201070000TraceContext.js';
import { Migration20261201110000TurnPartitions } from '../../migrations/Migration20261201110000TurnPartitions.js';
import { Migration20261201130000UnchangedDiscovery } from '../../migrations/Migration20261201130000UnchangedDiscovery.js';
import { Migration20261201140000DeclaredToolLists } from '../../migrations/Migration20261201140000DeclaredToolLists.js';
import { Migration20261201150000TurnEventWatch } from '../../migrations/Migration20261201150000TurnEventWatch.js';
import { Migration20261202150000ToolDialects } from '../../migrations/Migration20261202150000ToolDialects.js';
import { Migration20261202163000ToolSearch } from '../../migrations/Migration20261202163000ToolSearch.js';
import { Migration20261202164000McpClientTokens } from '../../migrations/Migration20261202164000McpClientTokens.js';
import { Migration20261202168000CallCaps } from '../../migrations/Migration20261202168000CallCaps.js';
import { Migration20261202203000McpSessionEnd } from '../../migrations/Migration20261202203000McpSessionEnd.js';
import { Migration20261202130000ReviewDiffs } from '../../migrations/Migration20261202130000ReviewDiffs.js';
import { Migration20261202140000CallGuards } from '../../migrations/Migration20261202140000CallGuards.js';
import { Migration20261201040000Usage } from '../../migrations/Migration20261201040000Usage.js';
import { Migration20261201101000UsageLive } from '../../migrations/Migration20261201101000UsageLive.js';
import { Migration20261130000000Initial } from '../../migrations/Migration20261130000000Initial.js';
import { Migration20261130100000OAuth } from '../../migrations/Migration20261130100000OAuth.js';
import { Migration20261130220000CallResends } from '../../migrations/Migration20261130220000CallResends.js';
import { Migration20261130223000DiscoveryRunInstance } from '../../migrations/Migration20261130223000DiscoveryRunInstance.js';
import { Migration20261130230000ApiTokenLifecycle } from '../../migrations/Migration20261130230000ApiTokenLifecycle.js';
import { Migration20261130233000DebuggerProgress } from '../../migrations/Migration20261130233000DebuggerProgress.js';
import { Migration20261130234500LedgerOutcome } from '../../migrations/Migration20261130234500LedgerOutcome.js';
import { Migration20261130234000ConsoleReads } from '../../migrations/Migration20261130234000ConsoleReads.js';
import { Migration20261201020000KeyOrigins } from '../../migrations/Migration20261201020000KeyOrigins.js';
import { Migration20261202120000CheckSchema } from '../../migrations/Migration20261202120000CheckSchema.js';

/**
 * The migrations, in order. Listed explicitly: the Migrator cannot import `.ts` files by itself
 * under vitest, and an explicit list works the same under tsx and a build.
 */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261130000000Initial', class: Migration20261130000000Initial },
  { name: 'Migration20261130100000OAuth', class: Migration20261130100000OAuth },
  { name: 'Migration20261130220000CallResends', class: Migration20261130220000CallResends },
  {
    name: 'Migration20261130223000DiscoveryRunInstance',
    class: Migration20261130223000DiscoveryRunInstance,
  },
  { name: 'Migration20261130230000ApiTokenLifecycle', class: Migration20261130230000ApiTokenLifecycle },
  { name: 'Migration20261130233000DebuggerProgress', class: Migration20261130233000DebuggerProgress },
  { name: 'Migration20261130234500LedgerOutcome', class: Migration20261130234500LedgerOutcome },
  { name: 'Migration20261130234000ConsoleReads', class: Migration20261130234000ConsoleReads },
  { name: 'Migration20261201020000KeyOrigins', class: Migration20261201020000KeyOrigins },
  { name: 'Migration20261201040000Usage', class: Migration20261201040000Usage },
  { name: 'Migration20261201070000TraceContext', class: Migration20261201070000TraceContext },
  { name: 'Migration20261201101000UsageLive', class: Migration20261201101000UsageLive },
  { name: 'Migration20261201110000TurnPartitions', class: Migration20261201110000TurnPartitions },
  { name: 'Migration20261201130000UnchangedDiscovery', class: Migration20261201130000UnchangedDiscovery },
  { name: 'Migration20261201140000DeclaredToolLists', class: Migration20261201140000DeclaredToolLists },
  { name: 'Migration20261201150000TurnEventWatch', class: Migration20261201150000TurnEventWatch },
  { name: 'Migration20261202120000CheckSchema', class: Migration20261202120000CheckSchema },
  { name: 'Migration20261202130000ReviewDiffs', class: Migration20261202130000ReviewDiffs },
  { name: 'Migration20261202140000CallGuards', class: Migration20261202140000CallGuards },
  { name: 'Migration20261202150000ToolDialects', class: Migration20261202150000ToolDialects },
  { name: 'Migration20261202163000ToolSearch', class: Migration20261202163000ToolSearch },
  { name: 'Migration20261202164000McpClientTokens', class: Migration20261202164000McpClientTokens },
  { name: 'Migration20261202168000CallCaps', class: Migration20261202168000CallCaps },
  { name: 'Migration20261202203000McpSessionEnd', class: Migration20261202203000McpSessionEnd },
];
