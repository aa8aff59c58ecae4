import type { AuthChecker } from 'type-graphql';
import type { Role } from '../auth/api-token.entity.js';
import type { Context } from './context.js';
import { forbidden, unauthenticated } from './errors.js';

/**
 * `@Authorized()` needs any valid token; `@Authorized([roles])` needs one of the roles. Throws
 * our own coded errors rather than type-graphql's, so every transport sees the same codes.
 */
export const authChecker: AuthChecker<Context, Role> = ({ context }, roles) => {
  if (!context.principal) throw unauthenticated();
  if (roles.length > 0 && !roles.includes(context.principal.role)) {
    throw forbidden(
      `this needs one of the roles ${roles.join(', ')}; your token is ${context.principal.role}`,
    );
  }
  return true;
};
