/**
 * A request's entity manager is forked only when a resolver asks for it, and once: Apollo hands
 * resolvers a shallow copy of the context, which must neither fork on its own nor fork again.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

let t: TestApp;
let admin: string;
let runtime: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  runtime = await t.token(Role.RUNTIME);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await t.stop();
});

/** Forks made by a request's context while `run` ran (the app's own background work is left out). */
async function contextForks(run: () => Promise<unknown>): Promise<number> {
  const em = t.app.services.orm.em;
  const fork = em.fork.bind(em);
  const stacks: string[] = [];
  const spy = vi.spyOn(em, 'fork').mockImplementation((...args) => {
    stacks.push(new Error().stack ?? '');
    return fork(...args);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return stacks.filter((stack) => stack.includes('graphql/context')).length;
}

describe("a request's entity manager", () => {
  it('should not be forked for a request whose resolvers never use it', async () => {
    await t.ok('{ __typename }', {}, runtime); // the token's lookup, cached from here on
    expect(await contextForks(() => t.ok('{ __typename }', {}, runtime))).toBe(0);
  });

  it('should be forked once for a request whose resolvers read the database', async () => {
    const read = () => t.ok('{ workspaces(first: 2) { nodes { id name } } }', {}, admin);
    expect(await contextForks(read)).toBe(1);
  });
});
