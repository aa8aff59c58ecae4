import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { buildSchema, type NonEmptyArray } from 'type-graphql';
import { AssistantResolver } from '../assistants/assistant.resolver.js';
import { ApiTokenResolver } from '../auth/api-token.resolver.js';
import { ReviewQueueResolver } from '../operations/review-queue.resolver.js';
import { LedgerLinksResolver, WorkspaceTurnsResolver } from '../turns/links.resolver.js';
import { ConnectionResolver } from '../connections/connection.resolver.js';
import { ConnectionRunsResolver, DiscoveryRunResolver } from '../discovery/discovery.resolver.js';
import { OAuthResolver } from '../oauth/oauth.resolver.js';
import { OperationChangeResolver, OperationResolver } from '../operations/operation.resolver.js';
import { ConnectionHealthResolver, OperationHealthResolver } from '../usage/health.resolver.js';
import { WorkspaceResolver } from '../workspaces/workspace.resolver.js';
import { AssistantTurnsResolver, TurnResolver, WorkspaceLedgerResolver } from '../turns/turn.resolver.js';
import { LedgerEntryResolver } from '../turns/ledger.resolver.js';
import { TurnCallDetailsResolver } from '../turns/call-details.resolver.js';
import { authChecker } from './auth-checker.js';
import { ViewerResolver } from './viewer.resolver.js';
import {
  ConnectionGuardsResolver,
  GuardsResolver,
  OperationGuardsResolver,
} from '../guards/guards.resolver.js';
import {
  AssistantUsageResolver,
  UsageSeriesResolver,
  WorkspaceUsageResolver,
} from '../usage/usage.resolver.js';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const RESOLVERS: NonEmptyArray<Function> = [
  ViewerResolver,
  WorkspaceResolver,
  AssistantResolver,
  ConnectionResolver,
  OperationResolver,
  OperationChangeResolver,
  DiscoveryRunResolver,
  ConnectionRunsResolver,
  OAuthResolver,
  TurnResolver,
  AssistantTurnsResolver,
  WorkspaceLedgerResolver,
  LedgerEntryResolver,
  ApiTokenResolver,
  TurnCallDetailsResolver,
  ReviewQueueResolver,
  LedgerLinksResolver,
  WorkspaceTurnsResolver,
  WorkspaceUsageResolver,
  AssistantUsageResolver,
  UsageSeriesResolver,
  ConnectionHealthResolver,
  OperationHealthResolver,
  GuardsResolver,
  ConnectionGuardsResolver,
  OperationGuardsResolver,
];

let built: GraphQLSchema | null = null;

/** The code-first schema. Built once per process: type-graphql metadata is global. */
export async function buildAppSchema(): Promise<GraphQLSchema> {
  built ??= await buildSchema({
    resolvers: RESOLVERS,
    authChecker,
    validate: false,
    emitSchemaFile: false,
    // Required by type-graphql for any @Subscription; ours use their own `subscribe` (events.ts),
    // so that events cross instances through PostgreSQL, not through this process.
    pubSub: createPubSub(),
  });
  return built;
}
