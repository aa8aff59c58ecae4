/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`, pinned as a dev dependency) lists
 * the assistant's tools and calls one, run exactly as docs/mcp-clients.md tells a user to: the
 * doc's `sh` block is read and run by bash, with `npx -y @modelcontextprotocol/inspector-cli@<v>`
 * standing for the same pinned version from node_modules (no network), from a subfolder of this
 * project as the doc asks (issue 27).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT as root } from '../../../src/project-root.js';
import { endpointUrl, mintMcpClientToken, recordedCalls } from '../../support/mcp-endpoint.js';
import { startCrmWorld, type CrmFixture } from '../../support/turns.js';

const run = promisify(execFile);
const doc = readFileSync(join(root, 'docs', 'mcp-clients.md'), 'utf8');
const cliPackage = join(root, 'node_modules', '@modelcontextprotocol', 'inspector-cli');
const installed = (JSON.parse(readFileSync(join(cliPackage, 'package.json'), 'utf8')) as { version: string })
  .version;
const NPX = `npx -y @modelcontextprotocol/inspector-cli@${installed}`;

/** The commands of the doc's `sh` block (backslash continuations joined). */
function docCommands(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/mcp-clients.md has no sh block');
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

let f: CrmFixture;
let token: string;

beforeAll(async () => {
  f = await startCrmWorld('Inspect');
  token = await mintMcpClientToken(f.t, f.w, 'inspector');
});
afterAll(async () => {
  await f.stop();
});

async function runDocCommand(command: string): Promise<unknown> {
  expect(command.startsWith(NPX), `the doc names the pinned version ${installed}`).toBe(true);
  const local = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(cliPackage, 'build', 'cli.js'))}${command.slice(NPX.length)}`;
  const { stdout } = await run('bash', ['-c', local], {
    cwd: join(root, 'test'), // a subfolder of an npm project, as the doc asks
    env: { ...process.env, MCP_URL: endpointUrl(f.t, f.w.assistantId).toString(), MCP_TOKEN: token },
    timeout: 60_000,
  });
  return JSON.parse(stdout.slice(stdout.indexOf('{'))) as unknown;
}

it('the doc pins the same inspector-cli version as package.json', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  expect(pkg.devDependencies['@modelcontextprotocol/inspector-cli']).toBe(installed);
  expect(docCommands()).toHaveLength(2);
});

it('lists the tools and calls one from the command line, as the doc says; the call is a TurnCall', async () => {
  const [list, call] = docCommands();
  const listed = (await runDocCommand(list!.replaceAll('crm__', 'inspect__'))) as {
    tools: { name: string }[];
  };
  expect(listed.tools.map((t) => t.name).sort()).toEqual([
    'inspect__fails',
    'inspect__lookup',
    'inspect__slow_read',
    'inspect__slow_write',
    'inspect__update',
  ]);
  // The doc's example connection is named CRM; this world's is named Inspect.
  const called = (await runDocCommand(call!.replaceAll('crm__', 'inspect__'))) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  expect(called.isError).toBeFalsy();
  expect(called.content[0]!.text).toContain('ada@example.com');
  const [row] = await recordedCalls(f.t, f.w.assistantId, 'inspect__lookup', { email: 'ada@example.com' });
  expect(row).toMatchObject({ status: 'SUCCEEDED', risk: 'READ' });
});
