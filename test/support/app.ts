import 'reflect-metadata';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { startApp, type App } from '../../src/app.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { Role } from '../../src/auth/api-token.entity.js';
import { mintToken } from '../../src/auth/auth.service.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';

export interface GraphQLResult<T> {
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
}

export interface TestApp {
  app: App;
  url: string;
  wsUrl: string;
  config: Config;
  /** Every SQL statement run since the last resetQueries(). */
  queries: string[];
  /** Every log line, at debug level, when started with `captureLogs`. */
  logs: string[];
  resetQueries(): void;
  token(role: Role, workspaceId?: string | null, label?: string): Promise<string>;
  gql<T, V>(
    doc: TypedDocumentNode<T, V> | string,
    variables?: V,
    token?: string | null,
  ): Promise<GraphQLResult<T>>;
  /** Like gql, but fails the test on any error and returns data. */
  ok<T, V>(doc: TypedDocumentNode<T, V> | string, variables?: V, token?: string | null): Promise<T>;
  stop(): Promise<void>;
}

/** A fresh, empty (unmigrated) database on the test server, dropped by the global teardown. */
export async function createEmptyDatabase(): Promise<string> {
  const adminUrl = inject('adminDatabaseUrl');
  const base = new URL(inject('databaseUrl')).pathname.slice(1);
  const name = `${base}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startTestApp(
  options: {
    databaseUrl?: string;
    env?: Record<string, string>;
    bootstrapAdmin?: boolean;
    captureLogs?: boolean;
    /** The call path's clock (src/clock.ts), e.g. a FakeClock (test/support/fake-clock.ts). */
    clock?: Clock;
    /** Wall time alone (rate limits' and breakers' windows), other timers staying real. */
    now?: () => number;
  } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ct-app-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: options.databaseUrl ?? inject('databaseUrl'),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const queries: string[] = [];
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = options.captureLogs ? createLogger('debug', sink) : createLogger(config.logLevel);
  const app = await startApp(config, logger, {
    onQuery: (sql) => queries.push(sql),
    bootstrapAdmin: options.bootstrapAdmin ?? false,
    clock: options.clock ?? (options.now ? { ...systemClock, now: options.now } : undefined),
  });
  const gql = async <T, V>(doc: TypedDocumentNode<T, V> | string, variables?: V, token?: string | null) => {
    const res = await fetch(app.http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query: typeof doc === 'string' ? doc : print(doc), variables }),
    });
    return (await res.json()) as GraphQLResult<T>;
  };
  return {
    app,
    url: app.http.url,
    wsUrl: app.http.wsUrl,
    config,
    queries,
    logs,
    resetQueries: () => {
      queries.length = 0;
    },
    token: async (role, workspaceId = null, label) => {
      const em = app.services.orm.em.fork();
      return (await mintToken(em, { role, workspaceId, label: label ?? `test ${role.toLowerCase()}` })).token;
    },
    gql,
    ok: async (doc, variables, token) => {
      const result = await gql(doc, variables, token);
      if (result.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors)}`);
      return result.data!;
    },
    stop: async () => {
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export { Role };
