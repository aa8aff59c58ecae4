/**
 * Binding the HTTP port, with a failure told in one line that names the setting to change.
 */
import type { Server } from 'node:http';

/** The port is taken, or the address cannot be bound: one line naming the setting to change. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** The `ListenError` for a failure of `listen`, or the error itself when it is none we know. */
export function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE')
    return new ListenError(
      `port ${port} on ${host} is already in use (another copy of this service?): stop that process or set PORT to a free port (PORT=0 picks any)`,
      { cause: err },
    );
  if (err.code === 'EACCES')
    return new ListenError(
      `not allowed to listen on port ${port} (ports under 1024 need privileges): set PORT`,
      {
        cause: err,
      },
    );
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND')
    return new ListenError(
      `cannot listen on ${host}: no such local address; set HOST (127.0.0.1 or 0.0.0.0)`,
      {
        cause: err,
      },
    );
  return err;
}

/** Binds `server` to `host:port`; rejects with `listenError`'s error. */
export async function listen(server: Server, port: number, host: string): Promise<void> {
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolveListen();
      });
    });
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, host, port);
  }
}
