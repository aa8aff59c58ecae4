/**
 * The MCP endpoint's Origin rule (issue 27; the transport spec: servers MUST validate `Origin`
 * against DNS rebinding) and its setting, MCP_ALLOWED_ORIGINS.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { originAllowed } from '../../../src/mcp-server/protocol.js';

const PUBLIC = 'https://tools.example.com';

describe('originAllowed', () => {
  it('lets a request without Origin through (a client that is not a browser)', () => {
    expect(originAllowed(undefined, PUBLIC, [])).toBe(true);
  });
  it("allows the service's own origin and the configured ones, nothing else", () => {
    expect(originAllowed('https://tools.example.com', PUBLIC, [])).toBe(true);
    expect(originAllowed('https://TOOLS.example.com', PUBLIC, [])).toBe(true);
    expect(originAllowed('https://app.example.com', PUBLIC, ['https://app.example.com'])).toBe(true);
    expect(originAllowed('https://evil.example', PUBLIC, ['https://app.example.com'])).toBe(false);
    // Same host, another scheme or port: another origin.
    expect(originAllowed('http://tools.example.com', PUBLIC, [])).toBe(false);
    expect(originAllowed('https://tools.example.com:8443', PUBLIC, [])).toBe(false);
    // A rebinding page on localhost reaching a local service.
    expect(originAllowed('http://localhost:3000', 'http://127.0.0.1:3000', [])).toBe(false);
  });
  it('refuses opaque and malformed origins', () => {
    expect(originAllowed('null', PUBLIC, [])).toBe(false);
    expect(originAllowed('', PUBLIC, [])).toBe(false);
    expect(originAllowed('file://', PUBLIC, [])).toBe(false);
    expect(originAllowed('https://tools.example.com\u0000', PUBLIC, [])).toBe(false);
    expect(originAllowed('chrome-extension://abc', PUBLIC, [])).toBe(false);
  });
});

describe('MCP_ALLOWED_ORIGINS', () => {
  it('is empty by default and reads a comma-separated list of origins', () => {
    expect(loadConfig({}).mcpServer.allowedOrigins).toEqual([]);
    expect(
      loadConfig({ MCP_ALLOWED_ORIGINS: ' https://app.example.com , http://localhost:5173,' }).mcpServer
        .allowedOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
  });
  it('refuses what is not an origin: a path, another scheme, a word', () => {
    for (const bad of ['https://app.example.com/path', 'ftp://x.example', 'app.example.com', '*'])
      expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'nope' })).toThrow(/MCP_ALLOWED_ORIGINS/);
  });
});
