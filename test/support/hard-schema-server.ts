/**
 * An MCP peer whose tools carry the hard cases of issue 26 item 7: input schemas that one model API
 * or another refuses as they are. It is built on the SDK's low-level `Server` with our own
 * `tools/list` handler, so every schema goes out exactly as written here (the high-level
 * `McpServer` would rebuild them from zod). Every tool echoes its arguments back as text and as
 * `structuredContent: { echo: arguments }`, so a round trip through a compiled declaration can be
 * checked against what the model wrote.
 *
 * {@link HARD_TOOLS} is exported so unit tests can use the same schemas without a server. Each tool
 * has an `example`: arguments valid against its canonical schema. Every definition stays under the
 * 64 KiB a listed tool may take (`MAX_TOOL_DEFINITION_BYTES`), so discovery keeps them all.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../src/operations/types.js';
import { startRawServer } from './mcp-servers.js';

export interface HardTool {
  name: string;
  description: string;
  /** Sent as is in `tools/list`. */
  inputSchema: JsonObject;
  /** Arguments valid against `inputSchema`. */
  example: JsonObject;
  /** The hard cases this tool carries, in words. */
  cases: readonly string[];
}

/** `levels` nested objects under the root, `level1` … `levelN`, the last holding `value`. */
function nestedObject(levels: number): { schema: JsonObject; example: JsonObject } {
  let schema: JsonObject = {
    type: 'object',
    properties: { value: { type: 'string' } },
    required: ['value'],
  };
  let example: JsonObject = { value: 'deep' };
  for (let level = levels; level >= 2; level--) {
    schema = { type: 'object', properties: { [`level${level}`]: schema } };
    example = { [`level${level}`]: example };
  }
  return {
    schema: { type: 'object', properties: { level1: schema }, required: ['level1'] },
    example: { level1: example },
  };
}

const DEEP = nestedObject(12);

/** 600 distinct values of 32 characters: 19,200 in all, over the 15,000 OpenAI takes for an enum this long. */
const COUNTRY_NAMES = Array.from(
  { length: 600 },
  (_, i) => `Republic of Example Land No. ${String(i).padStart(3, '0')}`,
);

/** 60 references to a 100-property definition: 6,060 properties once inlined, 4 KB as written. */
const WIDE_ROWS = 60;
const WIDE_FIELDS = 100;
const WIDE_SCHEMA: JsonObject = {
  type: 'object',
  $defs: {
    Row: {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: WIDE_FIELDS }, (_, i) => [`f${String(i).padStart(2, '0')}`, { type: 'string' }]),
      ),
    },
  },
  properties: Object.fromEntries(
    Array.from({ length: WIDE_ROWS }, (_, i) => [`r${String(i).padStart(2, '0')}`, { $ref: '#/$defs/Row' }]),
  ),
};

/** A property name over the 64 characters Anthropic and Gemini take. */
export const LONG_PROPERTY_NAME = 'a_property_name_that_is_much_longer_than_sixty_four_characters_in_all';

export const HARD_TOOLS: readonly HardTool[] = [
  {
    name: 'get_time',
    description: 'The current time in a time zone.',
    inputSchema: {
      type: 'object',
      properties: { timezone: { type: 'string', description: 'An IANA time zone, such as Europe/Rome.' } },
      required: ['timezone'],
    },
    example: { timezone: 'Europe/Rome' },
    cases: ['a plain easy tool'],
  },
  {
    // As the Python SDK (mcp 2.3.0, MCPServer) declares a tool taking two pydantic models.
    name: 'create_order',
    description: 'Creates an order for a customer.',
    inputSchema: {
      $defs: {
        Address: {
          properties: {
            street: { title: 'Street', type: 'string' },
            city: { title: 'City', type: 'string' },
            zip: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Zip' },
          },
          required: ['street', 'city'],
          title: 'Address',
          type: 'object',
        },
        Customer: {
          properties: {
            name: { title: 'Name', type: 'string' },
            address: { $ref: '#/$defs/Address' },
            billing: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
          },
          required: ['name', 'address'],
          title: 'Customer',
          type: 'object',
        },
      },
      properties: {
        customer: { $ref: '#/$defs/Customer' },
        shipping: { $ref: '#/$defs/Address', description: 'Where the order goes.' },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Note' },
      },
      required: ['customer'],
      title: 'create_orderArguments',
      type: 'object',
    },
    example: {
      customer: { name: 'Ada', address: { street: '1 Main St', city: 'Springfield' }, billing: null },
      shipping: { street: '2 Side St', city: 'Shelbyville', zip: '12345' },
      note: null,
    },
    cases: [
      'pydantic $defs and $ref',
      'Optional model as anyOf [$ref, {type: null}]',
      '$ref with a sibling description',
      'title and default everywhere',
    ],
  },
  {
    name: 'walk_tree',
    description: 'Walks a tree of named nodes.',
    inputSchema: {
      $defs: {
        TreeNode: {
          properties: {
            value: { title: 'Value', type: 'string' },
            children: { items: { $ref: '#/$defs/TreeNode' }, title: 'Children', type: 'array', default: [] },
          },
          required: ['value'],
          title: 'TreeNode',
          type: 'object',
        },
      },
      properties: { root: { $ref: '#/$defs/TreeNode' } },
      required: ['root'],
      type: 'object',
    },
    example: { root: { value: 'a', children: [{ value: 'b', children: [{ value: 'c' }] }, { value: 'd' }] } },
    cases: ['a recursive model (a cycle through $defs)'],
  },
  {
    name: 'find_user',
    description: 'Finds a user by id or by email.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } },
      anyOf: [{ required: ['id'] }, { required: ['email'] }],
    },
    example: { email: 'ada@example.com' },
    cases: ['a root anyOf of required lists'],
  },
  {
    // As zod's discriminated union comes out of zod-to-json-schema, with the MCP root type added.
    name: 'send_message',
    description: 'Sends a message by email or by SMS.',
    inputSchema: {
      type: 'object',
      anyOf: [
        {
          type: 'object',
          properties: {
            channel: { type: 'string', const: 'email' },
            to: { type: 'string', format: 'email' },
            text: { type: 'string' },
          },
          required: ['channel', 'to', 'text'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: {
            channel: { type: 'string', const: 'sms' },
            phone: { type: 'string', pattern: '^\\+[0-9]{8,15}$' },
            text: { type: 'string', maxLength: 160 },
          },
          required: ['channel', 'phone', 'text'],
          additionalProperties: false,
        },
      ],
    },
    example: { channel: 'sms', phone: '+15551234567', text: 'hello' },
    cases: ['a root anyOf of whole object schemas (a discriminated union)', 'const'],
  },
  {
    name: 'merge_settings',
    description: 'Merges settings.',
    inputSchema: {
      type: 'object',
      allOf: [
        { properties: { name: { type: 'string' } }, required: ['name'] },
        { properties: { size: { type: 'integer', minimum: 0 } } },
      ],
    },
    example: { name: 'x', size: 3 },
    cases: ['a root allOf to merge'],
  },
  {
    name: 'tag_items',
    description: 'Tags items.',
    inputSchema: {
      type: 'object',
      properties: {
        tags: { type: 'array', description: 'Any values.' },
        matrix: { type: 'array', items: { type: 'array' } },
        meta: { type: 'object', description: 'A free-form object.' },
      },
      required: ['tags'],
    },
    example: { tags: ['a', 1, true], matrix: [[1, 'x'], []], meta: { any: { thing: 1 } } },
    cases: ['arrays without items', 'an object without properties'],
  },
  {
    name: 'set_level',
    description: 'Sets a level.',
    inputSchema: {
      type: 'object',
      properties: {
        level: { type: 'integer', enum: [1, 2, 3] },
        ratio: { type: 'number', enum: [0.5, 1, 1.5] },
        on: { type: 'boolean', enum: [true] },
      },
      required: ['level'],
    },
    example: { level: 2, ratio: 1.5, on: true },
    cases: ['integer enums', 'number and boolean enums'],
  },
  {
    name: 'pin_version',
    description: 'Pins an API version.',
    inputSchema: {
      type: 'object',
      properties: {
        version: { const: 'v2' },
        api: { type: 'integer', const: 3 },
        dry_run: { type: 'boolean', const: true },
      },
      required: ['version'],
    },
    example: { version: 'v2', api: 3 },
    cases: ['const (string, integer, boolean)', 'a const without type'],
  },
  {
    name: 'transfer',
    description: 'Transfers an amount.',
    inputSchema: {
      type: 'object',
      properties: {
        amount_cents: { type: 'integer', exclusiveMinimum: 0, multipleOf: 5 },
        rate: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        ids: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      },
      required: ['amount_cents'],
    },
    example: { amount_cents: 500, rate: 0.25, ids: ['a', 'b'] },
    cases: ['exclusiveMinimum and exclusiveMaximum', 'multipleOf', 'uniqueItems'],
  },
  {
    name: 'sort_rows',
    description: 'Sorts rows.',
    inputSchema: {
      type: 'object',
      properties: {
        sort: { type: 'string', enum: ['', 'asc', 'desc'], description: 'Empty for the natural order.' },
        nulls: { enum: ['', 'first', 'last', null] },
      },
      required: ['sort'],
    },
    example: { sort: '', nulls: null },
    cases: ['empty-string enum values', 'an enum with null and no type'],
  },
  {
    name: 'query_odd_names',
    description: 'A query whose parameters have odd names.',
    inputSchema: {
      type: 'object',
      properties: {
        'filter.name': { type: 'string' },
        filter_name: {
          type: 'string',
          description: 'Collides with filter.name once dots become underscores.',
        },
        'page size': { type: 'integer' },
        città: { type: 'string' },
        名前: { type: 'string' },
        'filter[id]': { type: 'string' },
        '1st': { type: 'boolean' },
        'naïve-flag': { type: 'boolean' },
        [LONG_PROPERTY_NAME]: { type: 'string' },
        nested: { type: 'object', properties: { 'inner key': { type: 'string' } } },
      },
      required: ['filter.name', 'page size'],
    },
    example: {
      'filter.name': 'x',
      filter_name: 'y',
      'page size': 10,
      città: 'Roma',
      名前: 'Taro',
      'filter[id]': '7',
      '1st': true,
      'naïve-flag': false,
      [LONG_PROPERTY_NAME]: 'long',
      nested: { 'inner key': 'v' },
    },
    cases: [
      'property names with ".", spaces, brackets and non-ASCII characters',
      'a property name starting with a digit',
      'a property name over 64 characters',
      'two names that collide once sanitised',
    ],
  },
  {
    name: 'pick_country',
    description: 'Picks a country by code.',
    inputSchema: {
      type: 'object',
      properties: { country: { type: 'string', enum: COUNTRY_NAMES } },
      required: ['country'],
    },
    example: { country: 'Republic of Example Land No. 599' },
    cases: ['a 600-value enum of 19,200 characters'],
  },
  {
    name: 'deep_config',
    description: 'A configuration nested 12 levels below the root.',
    inputSchema: DEEP.schema,
    example: DEEP.example,
    cases: ['12 levels of nesting'],
  },
  {
    name: 'wide_report',
    description: `A report of ${WIDE_ROWS} rows of ${WIDE_FIELDS} fields.`,
    inputSchema: WIDE_SCHEMA,
    example: { r00: { f00: 'a', f99: 'b' }, r59: {} },
    cases: [`${WIDE_ROWS * WIDE_FIELDS + WIDE_ROWS} properties once $refs are inlined (over 6,000)`],
  },
  {
    name: '2fa_verify',
    description: 'Verifies a one-time code.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[0-9]{6}$' } },
      required: ['code'],
    },
    example: { code: '123456' },
    cases: ['a tool name that starts with a digit'],
  },
  {
    // As FastMCP 4.0.10 declares a tool taking a nested pydantic model and Optional fields.
    name: 'fastmcp_search',
    description: 'Searches, FastMCP style.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null },
        filters: {
          anyOf: [
            {
              type: 'object',
              properties: {
                owner: { type: 'string' },
                since: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], default: null },
              },
              required: ['owner'],
              additionalProperties: false,
            },
            { type: 'null' },
          ],
          default: null,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    example: { query: 'reports', limit: null, filters: { owner: 'me', since: null } },
    cases: [
      'additionalProperties: false everywhere',
      'Optional as anyOf [T, {type: null}]',
      'nested models inlined',
    ],
  },
  {
    name: 'keyword_soup',
    description: 'Uses JSON Schema 2020-12 keywords that model APIs rarely take.',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        url: { type: 'string', format: 'uri', minLength: 8, maxLength: 2048 },
        shape: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        both: { allOf: [{ type: 'string' }, { minLength: 2 }] },
        present: { not: { type: 'null' } },
        kind: { type: 'string', enum: ['a', 'b'], default: 'a', examples: ['a'] },
        labels: {
          type: 'object',
          additionalProperties: { type: 'string' },
          propertyNames: { pattern: '^[a-z]+$' },
          minProperties: 1,
        },
        env: { type: 'object', patternProperties: { '^X_': { type: 'string' } } },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
        roles: { type: 'array', items: { type: 'string' }, contains: { const: 'admin' } },
        anything: true,
        free: {},
      },
      dependentRequired: { url: ['kind'] },
      if: { properties: { kind: { const: 'b' } }, required: ['kind'] },
      then: { required: ['shape'] },
      required: ['url'],
    },
    example: {
      url: 'https://example.com/x',
      kind: 'b',
      shape: 3,
      both: 'ok',
      present: 1,
      labels: { env: 'prod' },
      env: { X_A: '1' },
      pair: ['a', 1],
      roles: ['admin'],
      anything: [1],
      free: { a: 1 },
    },
    cases: [
      '$schema',
      'oneOf, allOf, not, if/then/else, dependentRequired',
      'additionalProperties as a schema, propertyNames, patternProperties, minProperties',
      'prefixItems, contains, boolean and empty schemas',
      'format uri, minLength, maxLength, default, examples',
    ],
  },
];

/** What the server saw of one `tools/call`. */
export interface HardCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface HardSchemaServerHandle {
  url: string;
  /** Every `tools/call`, in arrival order. */
  calls: HardCall[];
  close(): Promise<void>;
}

/**
 * One stateless MCP server (a new one per request), listing `tools` exactly as written: each a READ
 * (`readOnlyHint: true`) but those named in `writes`, which say nothing of their risk (WRITEs).
 */
function buildServer(tools: readonly HardTool[], calls: HardCall[], writes: ReadonlySet<string>): Server {
  const server = new Server({ name: 'hard-schema-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      annotations: writes.has(tool.name) ? {} : { readOnlyHint: true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
    const { name } = request.params;
    if (!tools.some((tool) => tool.name === name))
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name)}`);
    const args = request.params.arguments ?? {};
    calls.push({ name, arguments: args });
    return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: { echo: args } };
  });
  return server;
}

/**
 * Starts the peer on a random loopback port; `tools` defaults to {@link HARD_TOOLS}, every one a
 * READ but those named in `writes`.
 */
export async function startHardSchemaServer(
  options: { tools?: readonly HardTool[]; writes?: readonly string[] } = {},
): Promise<HardSchemaServerHandle> {
  const { tools = HARD_TOOLS } = options;
  const writes = new Set(options.writes ?? []);
  const calls: HardCall[] = [];
  const raw = await startRawServer(async (req, res, incoming) => {
    if (req.httpMethod !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = buildServer(tools, calls, writes);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(incoming, res, req.body);
  });
  return { url: raw.url, calls, close: () => raw.close() };
}
