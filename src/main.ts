import 'reflect-metadata';
import { startApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startFailureLine } from './start-errors.js';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const logger = createLogger(config.logLevel);

try {
  const app = await startApp(config, logger, {
    // The embedded PostgreSQL died and every restart failed: nothing can be served or recorded.
    onDatabaseLost: (err) => {
      logger.fatal(
        { err: { message: err.message } },
        'the embedded PostgreSQL could not be restarted; exiting',
      );
      process.exit(1);
    },
  });
  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    app.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (err) {
  // The failures a newcomer meets get one line that names the setting; anything else its stack.
  const line = startFailureLine(err, config.databaseUrl);
  if (line !== null) {
    process.stderr.write(`could not start: ${line}\n`);
  } else {
    logger.fatal({ err }, 'could not start');
  }
  process.exit(1);
}
