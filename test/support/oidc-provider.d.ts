/**
 * The part of oidc-provider 9 (a dev dependency without bundled types) that
 * test/support/oauth-server.ts uses. Shapes follow the library's documentation.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccessTokenInstance {
    aud?: string | string[];
    accountId?: string;
    clientId?: string;
    scope?: string;
    readonly isExpired: boolean;
    destroy(): Promise<void>;
  }

  export interface RefreshTokenInstance {
    grantId?: string;
    clientId?: string;
    destroy(): Promise<void>;
  }

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }

  export interface InteractionDetails {
    uid: string;
    grantId?: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
  }

  export interface KoaContextWithOIDC {
    method: string;
    path: string;
    status: number;
    oidc?: { params?: Record<string, unknown>; client?: { clientId: string } };
  }

  export type Configuration = Record<string, unknown>;

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    /** Listeners get the context (`grant.*`, `registration_*`) or the model (`*.saved`). */
    on(event: string, listener: (...args: never[]) => void): this;
    readonly AccessToken: { find(value: string): Promise<AccessTokenInstance | undefined> };
    readonly RefreshToken: { find(value: string): Promise<RefreshTokenInstance | undefined> };
    readonly Grant: {
      new (init: { accountId?: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
  };

  export default Provider;
}
