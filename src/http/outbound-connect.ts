/**
 * Outbound connections: the connect-time address check on every DNS answer, and the translation
 * of undici's and the connector's errors into `OutboundError`s that name the host only.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { OutboundError, OutboundErrorCode } from './outbound-error.js';
import { classifyAddress, isAddressAllowed } from './url-policy.js';

/**
 * Wraps a DNS lookup so that every address it yields is checked before `net.connect` uses it.
 * Node calls it with `all: true` when it races address families, so both callback shapes are served.
 */
export function guardedLookup(base: LookupFunction, allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const wantAll = options.all === true;
    const opts: LookupOptions = { ...options, all: true };
    base(hostname, opts, (err, result, family) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list: LookupAddress[] =
        typeof result === 'string' ? [{ address: result, family: family ?? isIP(result) }] : result;
      if (list.length === 0) {
        const notFound: NodeJS.ErrnoException = new Error(`no addresses for ${hostname}`);
        notFound.code = 'ENOTFOUND';
        callback(notFound, '', 0);
        return;
      }
      for (const entry of list) {
        if (!isAddressAllowed(entry.address, allowLoopback)) {
          callback(addressRefused(hostname, classifyAddress(entry.address)), '', 0);
          return;
        }
      }
      const first = list[0] as LookupAddress;
      if (wantAll) callback(null, list);
      else callback(null, first.address, first.family);
    });
  };
}

export function addressRefused(host: string, range: string): OutboundError {
  return new OutboundError(
    OutboundErrorCode.ADDRESS_REFUSED,
    `${host} is or resolves to a ${range} address, which is refused; if it is a server of yours that the service should reach, add it to OUTBOUND_ALLOW_HOSTS`,
    { reachedServer: false, data: { host, range } },
  );
}

export function errorCodeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errorCodeOf(cause);
}

/** Everything the connector reports failed before a request byte was written. */
export function connectFailed(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = errorCodeOf(err) ?? 'UNKNOWN';
  return new OutboundError(OutboundErrorCode.CONNECT_FAILED, `could not connect to ${host} (${code})`, {
    reachedServer: false,
    data: { host, cause: code },
    cause: err,
  });
}

export function translateError(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = errorCodeOf(err) ?? 'UNKNOWN';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new OutboundError(OutboundErrorCode.TIMEOUT, `request to ${host} timed out`, {
      reachedServer: true,
      data: { host },
      cause: err,
    });
  }
  if (code === 'UND_ERR_INVALID_ARG') {
    // undici refused the request before sending it; our own checks should have caught it first.
    return new OutboundError(
      OutboundErrorCode.HEADER_INVALID,
      `request to ${host} was refused by the client`,
      {
        reachedServer: false,
        data: { host },
        cause: err,
      },
    );
  }
  return new OutboundError(OutboundErrorCode.TRANSPORT_ERROR, `connection to ${host} failed (${code})`, {
    reachedServer: true,
    data: { host, cause: code },
    cause: err,
  });
}
