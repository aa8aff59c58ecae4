import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { wantsExplorer } from '../../../src/http/explorer-routes.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const none = new URLSearchParams();

describe('wantsExplorer', () => {
  it('should give a browser navigating to /graphql the page', () => {
    expect(wantsExplorer('GET', BROWSER, none)).toBe(true);
    expect(wantsExplorer('HEAD', 'text/html', none)).toBe(true);
    expect(wantsExplorer('GET', 'application/json, TEXT/HTML;q=0.5', none)).toBe(true);
  });

  it.each([
    ['a GraphQL client', 'GET', 'application/json', none],
    ['no Accept header', 'GET', undefined, none],
    ['*/* only', 'GET', '*/*', none],
    ['a look-alike type', 'GET', 'text/htmlx', none],
    ['a POST', 'POST', BROWSER, none],
    ['a GET that names a query', 'GET', BROWSER, new URLSearchParams({ query: '{ viewer { role } }' })],
    ['a GET with extensions (persisted query)', 'GET', BROWSER, new URLSearchParams({ extensions: '{}' })],
  ])('should leave %s to GraphQL (token check, CSRF prevention)', (_what, method, accept, search) => {
    expect(wantsExplorer(method, accept, search)).toBe(false);
  });
});

describe('GRAPHIQL', () => {
  it('should be on by default outside production and off in production', () => {
    expect(loadConfig({}).graphiql).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).graphiql).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', SECRET_KEY: 'a'.repeat(64) }).graphiql).toBe(false);
  });

  it('should follow the setting either way', () => {
    expect(loadConfig({ GRAPHIQL: 'off' }).graphiql).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', SECRET_KEY: 'a'.repeat(64), GRAPHIQL: 'on' }).graphiql).toBe(
      true,
    );
    expect(() => loadConfig({ GRAPHIQL: 'maybe' })).toThrow(/GRAPHIQL must be true or false/);
  });
});
