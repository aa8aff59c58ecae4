import { AssistantConnection } from '../assistants/assistant-connection.entity.js';
import { Assistant } from '../assistants/assistant.entity.js';
import { AuditEvent } from '../audit/audit-event.entity.js';
import { ApiToken } from '../auth/api-token.entity.js';
import { Connection } from '../connections/connection.entity.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { OAuthClient } from '../oauth/oauth-client.entity.js';
import { OAuthCredential } from '../oauth/oauth-credential.entity.js';
import { OAuthSignIn } from '../oauth/oauth-sign-in.entity.js';
import { Operation } from '../operations/operation.entity.js';
import { OperationChange } from '../operations/operation-change.entity.js';
import { ReviewReason } from '../operations/review-reason.entity.js';
import { LedgerEntry } from '../turns/ledger-entry.entity.js';
import { TurnCall } from '../turns/turn-call.entity.js';
import { TurnEvent } from '../turns/turn-event.entity.js';
import { Turn } from '../turns/turn.entity.js';
import { Workspace } from '../workspaces/workspace.entity.js';

/** Every entity, listed explicitly: no folder scanning, so tsx, vitest and a build all agree. */
export const ENTITIES = [
  Workspace,
  Assistant,
  Connection,
  Operation,
  ReviewReason,
  OperationChange,
  DiscoveryRun,
  AssistantConnection,
  Turn,
  TurnCall,
  TurnEvent,
  LedgerEntry,
  ApiToken,
  AuditEvent,
  OAuthClient,
  OAuthSignIn,
  OAuthCredential,
];
