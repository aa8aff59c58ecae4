import { describe, expect, it } from 'vitest';
import { createContext } from '../../../src/graphql/context.js';
import type { Services } from '../../../src/services.js';

function fakeServices() {
  const forks: object[] = [];
  const services = {
    orm: {
      em: {
        fork: () => {
          const em = { id: forks.length };
          forks.push(em);
          return em;
        },
      },
    },
  } as unknown as Services;
  return { services, forks };
}

describe('createContext', () => {
  it('should fork the entity manager only when asked, once, and build the loaders on that fork', () => {
    const { services, forks } = fakeServices();
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const ctx = createContext(services, null, { trace });
    expect(forks).toHaveLength(0);
    expect(ctx.trace).toBe(trace);
    expect(ctx.services).toBe(services);
    const em = ctx.em;
    expect(forks).toEqual([em]);
    expect(ctx.em).toBe(em);
    const loaders = ctx.loaders;
    expect(ctx.loaders).toBe(loaders);
    expect(forks).toHaveLength(1);
  });

  it('should give each context its own fork', () => {
    const { services, forks } = fakeServices();
    const a = createContext(services, null);
    const b = createContext(services, null);
    expect(b.loaders).not.toBe(a.loaders);
    expect(a.em).not.toBe(b.em);
    expect(forks).toHaveLength(2);
  });
});

/** What Apollo does to a context before its resolvers see it (`cloneObject` in ApolloServer.js). */
function apolloCopy<T extends object>(context: T): T {
  return Object.assign(Object.create(Object.getPrototypeOf(context) as object) as T, context);
}

describe("createContext under Apollo's shallow copy", () => {
  it('should fork nothing when copied, and share one fork between the copy and the original', () => {
    const { services, forks } = fakeServices();
    const record = { reqId: 'r-1' };
    const ctx = createContext(services, null, { requestLog: record });
    const copy = apolloCopy(ctx);
    expect(forks).toHaveLength(0);
    expect(copy.requestLog).toBe(record);
    expect(copy.services).toBe(services);
    const em = copy.em;
    expect(ctx.em).toBe(em);
    expect(copy.loaders).toBe(ctx.loaders);
    expect(forks).toHaveLength(1);
  });
});
