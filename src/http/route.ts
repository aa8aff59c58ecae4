import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * An extra route (such as the OAuth callback or the debugger page) mounted by app.ts. Its own
 * module, so that route modules and the server that mounts them do not import each other.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
