import type { Role } from './api-token.entity.js';

/** Who is asking: resolved from the API token once per request or socket. */
export interface Principal {
  tokenId: string;
  role: Role;
  /** Set for CUSTOMER tokens (and optionally RUNTIME): the only workspace they may see. */
  workspaceId: string | null;
  /** A human label for audit trails; never the token. */
  label: string;
}
