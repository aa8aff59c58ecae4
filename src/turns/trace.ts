/**
 * W3C trace context from the runtime's request (issue 14, item 7), validated before it goes
 * anywhere: a `traceparent` that is not exactly the W3C form is ignored (with its `tracestate`),
 * never repaired. Pure.
 *
 * - `traceparent`: `version-traceid-parentid-flags`, lowercase hex; version `ff` is invalid; version
 *   `00` has exactly these four fields (a later version may add fields after a `-`, kept as sent);
 *   trace id and parent id not all zeros.
 * - `tracestate`: kept when it is at most 512 characters of printable ASCII (the W3C limit is 32
 *   list members; the header is opaque to us), else dropped on its own.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

export const TRACESTATE_MAX_CHARS = 512;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;

type Header = string | string[] | undefined;

/** One header value: a header sent twice is ambiguous, so it counts as absent. */
function single(value: Header): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value;
}

export function parseTraceContext(traceparentHeader: Header, tracestateHeader: Header): TraceContext | null {
  const traceparent = single(traceparentHeader)?.trim();
  if (!traceparent || traceparent.length > 256) return null;
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return null;
  const [, version, traceId, parentId, , rest] = m;
  if (version === 'ff') return null;
  if (version === '00' && rest !== undefined) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return null;
  const tracestate = single(tracestateHeader)?.trim();
  const keep =
    tracestate !== undefined &&
    tracestate.length > 0 &&
    tracestate.length <= TRACESTATE_MAX_CHARS &&
    /^[\x20-\x7e]+$/.test(tracestate);
  return keep ? { traceparent, tracestate } : { traceparent };
}
