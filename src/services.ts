import type { MikroORM } from '@mikro-orm/postgresql';
import type { AuthService } from './auth/auth.service.js';
import type { Config } from './config.js';
import type { SecretBox } from './connections/secrets.js';
import type { Logger } from './logger.js';

/** The process-wide singletons, built once in app.ts and shared by every request. */
export interface Services {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  auth: AuthService;
  secrets: SecretBox;
}
