import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { declareTools } from '../../../src/turns/declare.js';
import { compileToolList } from '../../../src/turns/dialects/declarations.js';
import { chooseSearch, searchToolList, searchToolsTool } from '../../../src/turns/search/declare-search.js';

const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: 'postgres://x@127.0.0.1/x' }).toolSearch;

function fullList(n: number, dialect: 'OPENAI' | 'ANTHROPIC' = 'OPENAI') {
  const list = declareTools({
    builtIns: [{ name: 'handoff', description: 'Hand off', inputSchema: { type: 'object', properties: {} } }],
    operations: Array.from({ length: n }, (_, i) => ({
      operationId: `op-${String(i).padStart(3, '0')}`,
      connectionSlug: 'crm',
      name: `tool_${String(i).padStart(3, '0')}`,
      description: `Tool ${i}`,
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    })),
  });
  return compileToolList(dialect, list, (id) => id, new WeakMap(), null);
}

describe('chooseSearch', () => {
  const small = { connectionTools: 10, otherTools: 2, bytes: 1_000 };
  it('AUTO searches past the dialect cap (less the other tools) or the byte budget, not below', () => {
    expect(chooseSearch(null, 'OPENAI', small, config)).toEqual({ on: false });
    expect(chooseSearch(null, 'OPENAI', { ...small, connectionTools: 126 }, config)).toEqual({ on: false });
    expect(chooseSearch(null, 'OPENAI', { ...small, connectionTools: 127 }, config)).toEqual({
      on: true,
      provider: 'SERVICE',
      declare: 20,
    });
    // GENERIC has no cap: only bytes count.
    expect(chooseSearch(null, 'GENERIC', { ...small, connectionTools: 5_000 }, config)).toEqual({
      on: false,
    });
    expect(
      chooseSearch(null, 'GENERIC', { ...small, bytes: config.autoBytes + 1 }, config).valueOf(),
    ).toMatchObject({ on: true });
    expect(chooseSearch({ mode: 'AUTO' }, 'OPENAI', small, { ...config, autoTools: 5 })).toMatchObject({
      on: true,
    });
  });
  it('OFF and ON are what they say; declare and provider are checked', () => {
    const big = { connectionTools: 1_000, otherTools: 2, bytes: 10_000_000 };
    expect(chooseSearch({ mode: 'OFF' }, 'OPENAI', big, config)).toEqual({ on: false });
    expect(chooseSearch({ mode: 'ON', declare: 3 }, 'OPENAI', small, config)).toEqual({
      on: true,
      provider: 'SERVICE',
      declare: 3,
    });
    expect(chooseSearch({ mode: 'ON', declare: -1 }, 'OPENAI', small, config)).toBeTypeOf('string');
    expect(chooseSearch({ mode: 'ON', declare: 1.5 }, 'OPENAI', small, config)).toBeTypeOf('string');
    expect(chooseSearch({ mode: 'ON', provider: 'ANTHROPIC' }, 'OPENAI', small, config)).toBeTypeOf('string');
  });
});

describe('searchToolList', () => {
  it('declares built-ins, search_tools, the always-declare tools up to declare, and finish_turn last', () => {
    const full = fullList(300);
    const always = new Set(['op-005', 'op-001', 'op-200']);
    const list = searchToolList(
      full,
      { on: true, provider: 'SERVICE', declare: 2 },
      (id) => always.has(id),
      searchToolsTool(config),
      new WeakMap(),
    );
    expect(list.tools.map((t) => t.name)).toEqual([
      'handoff',
      'search_tools',
      'crm__tool_001',
      'crm__tool_005',
      'finish_turn',
    ]);
    expect(Object.values(list.map)).toEqual(['op-001', 'op-005']);
    expect(list.tools[1]!.declaration).toMatchObject({
      type: 'function',
      function: { name: 'search_tools' },
    });
  });
  it('ANTHROPIC defers every tool not declared up front and adds its search tool', () => {
    const full = fullList(50, 'ANTHROPIC');
    const list = searchToolList(
      full,
      { on: true, provider: 'ANTHROPIC', declare: 5 },
      (id) => id === 'op-007',
      searchToolsTool(config),
      new WeakMap(),
    );
    const names = list.tools.map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['handoff', 'tool_search_tool_bm25', 'crm__tool_007']);
    expect(names.at(-1)).toBe('finish_turn');
    expect(list.tools.filter((t) => t.declaration.defer_loading === true).length).toBe(49);
    expect(Object.keys(list.map).length).toBe(50);
  });
});
