/**
 * Headers the MCP transport sets itself (tool contract page, "Credentials"): a credential may not be
 * sent in one of them. Lower case. Shared by input validation and the MCP client's last check.
 */
export const TRANSPORT_HEADER_NAMES: ReadonlySet<string> = new Set([
  'accept',
  'content-type',
  'content-length',
  'host',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'traceparent',
  'tracestate',
  'transfer-encoding',
  'connection',
  'cookie',
  'user-agent',
]);
