import type { Role } from './api-token.entity.js';

/** Who is asking: resolved from the API token once per request or socket. */
export interface Principal {
  tokenId: string;
  role: Role;
  /** Set for CUSTOMER tokens (and optionally RUNTIME): the only workspace they may see. */
  workspaceId: string | null;
  /** Set for MCP_CLIENT tokens only: the one assistant they may list and call tools of. */
  assistantId?: string | null;
  /** A human label for audit trails; never the token. */
  label: string;
}
